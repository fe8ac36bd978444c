package interpodaffinity

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// termIndex caches, per node, the required anti-affinity terms of the pods on
// it, with identical terms interned to one id. Replicas of one template carry
// identical terms, so PreFilter checks each distinct term against the
// incoming pod once instead of once per existing pod.
type termIndex struct {
	ids   map[string]int32
	terms []framework.AffinityTerm
	nodes map[*framework.NodeInfo]*nodeTerms
}

type termCount struct {
	term  int32
	count int32
}

type nodeTerms struct {
	gen    int64
	counts []termCount
}

func newTermIndex() *termIndex {
	return &termIndex{ids: map[string]int32{}, nodes: map[*framework.NodeInfo]*nodeTerms{}}
}

const maxTerms = 1 << 18

func (x *termIndex) beginCycle(numNodes int) {
	if len(x.terms) > maxTerms || len(x.nodes) > 2*numNodes+1024 {
		x.ids, x.terms, x.nodes = map[string]int32{}, nil, map[*framework.NodeInfo]*nodeTerms{}
	}
}

// counts returns the interned required anti-affinity terms on ni with how
// many pods there carry each.
func (x *termIndex) counts(ni *framework.NodeInfo) []termCount {
	if e := x.nodes[ni]; e != nil && e.gen == ni.Generation {
		return e.counts
	}
	e := &nodeTerms{gen: ni.Generation}
	for _, p := range ni.PodsWithRequiredAntiAffinity {
		for i := range p.RequiredAntiAffinityTerms {
			id := x.intern(&p.RequiredAntiAffinityTerms[i])
			found := false
			for j := range e.counts {
				if e.counts[j].term == id {
					e.counts[j].count++
					found = true
					break
				}
			}
			if !found {
				e.counts = append(e.counts, termCount{term: id, count: 1})
			}
		}
	}
	x.nodes[ni] = e
	return e.counts
}

func selectorSignature(s labels.Selector) string {
	if s == nil {
		return "\x00nil"
	}
	if _, ok := s.Requirements(); !ok {
		return "\x00nothing"
	}
	return s.String()
}

// intern keys a term by everything that decides what it matches.
func (x *termIndex) intern(t *framework.AffinityTerm) int32 {
	nss := t.Namespaces.UnsortedList()
	sort.Strings(nss)
	key := strings.Join([]string{strings.Join(nss, ","), selectorSignature(t.NamespaceSelector), selectorSignature(t.Selector), t.TopologyKey}, "\x01")
	if id, ok := x.ids[key]; ok {
		return id
	}
	id := int32(len(x.terms))
	x.terms = append(x.terms, *t)
	x.ids[key] = id
	return id
}

// termMatchesClass is AffinityTerm.Matches for a pod class.
func termMatchesClass(t *framework.AffinityTerm, c *helper.PodClass, nsLabels labels.Set) bool {
	if t.Namespaces.Has(c.Namespace) || t.NamespaceSelector.Matches(nsLabels) {
		return t.Selector.Matches(c.Labels)
	}
	return false
}
