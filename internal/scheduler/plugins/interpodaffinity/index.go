package interpodaffinity

import (
	"maps"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// termIndex interns required anti-affinity terms: replicas of one template
// carry identical terms, so PreFilter checks each distinct term against the
// incoming pod once instead of once per existing pod.
type termIndex struct {
	ids   map[string]int32
	terms []framework.AffinityTerm
	// memo keeps, per incoming pod class, whether each term selects it.
	memo matchTable
}

// matches is term id's Matches(pod, nsLabels) for pod of class.
func (x *termIndex) matches(id int, class int32, pod *v1.Pod, nsLabels labels.Set) bool {
	c := x.memo.cell(class, id, len(x.terms))
	if *c == 0 {
		*c = 2
		if x.terms[id].Matches(pod, nsLabels) {
			*c = 1
		}
	}
	return *c == 1
}

func newTermIndex() *termIndex {
	return &termIndex{ids: map[string]int32{}}
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

// termKey is everything that decides what a term matches, and its key.
func termKey(t *framework.AffinityTerm) string {
	nss := t.Namespaces.UnsortedList()
	sort.Strings(nss)
	return strings.Join([]string{strings.Join(nss, ","), selectorSignature(t.NamespaceSelector), selectorSignature(t.Selector), t.TopologyKey}, "\x01")
}

// intern keys a term by termKey.
func (x *termIndex) intern(t *framework.AffinityTerm) int32 {
	key := termKey(t)
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

// existingIndex is the plugin's per-snapshot view of the existing pods: pod
// classes per topology domain, and per interned required anti-affinity term
// the pods carrying it per domain of the term's key. It is advanced from the
// handle's pod log, so PreFilter no longer walks every node.
type existingIndex struct {
	domains     *helper.ClassDomainIndex
	terms       *termIndex
	termDomains []map[string]int64
	// scoringPods counts pods whose terms PreScore looks at (required
	// affinity, preferred affinity or anti-affinity); scoring counts their
	// terms per domain (scoreindex.go).
	scoringPods int
	scoring     *scoreTerms
}

func newExistingIndex() *existingIndex {
	x := &existingIndex{domains: helper.NewClassDomainIndex()}
	x.domains.OnReset = func() {
		x.terms, x.termDomains, x.scoringPods, x.scoring = newTermIndex(), nil, 0, newScoreTerms(x.domains)
	}
	x.domains.OnAdd = x.add
	x.domains.OnReset()
	return x
}

func (x *existingIndex) add(ni *framework.NodeInfo, pi *framework.PodInfo) {
	if len(pi.RequiredAffinityTerms) > 0 || len(pi.PreferredAffinityTerms) > 0 || len(pi.PreferredAntiAffinityTerms) > 0 {
		x.scoringPods++
	}
	if ni.Node == nil {
		return
	}
	x.scoring.addPod(ni, pi)
	for i := range pi.RequiredAntiAffinityTerms {
		t := &pi.RequiredAntiAffinityTerms[i]
		id := x.terms.intern(t)
		for int(id) >= len(x.termDomains) {
			x.termDomains = append(x.termDomains, nil)
		}
		v, ok := ni.Node.Labels[t.TopologyKey]
		if !ok {
			continue
		}
		if x.termDomains[id] == nil {
			x.termDomains[id] = map[string]int64{}
		}
		x.termDomains[id][v]++
	}
}

// countSource is one read-only per-domain count map of a topology key.
type countSource struct {
	key    string
	counts map[string]int64
}

// lazyCounts is a topologyCounts kept as a sum of shared index maps, which
// are never written. AddPod and RemovePod (preemption's dry run, nominated
// pods) write an overlay of the pairs they change instead, so that Clone
// copies only those edits (docs/scheduler.md, "Copy-on-write cycle state").
// Source maps hold positive counts only.
type lazyCounts struct {
	sources []countSource
	// overlay holds the current count of each changed pair (0: absent, as
	// a topologyCounts deletes pairs that drop to zero); nil on the main
	// cycle.
	overlay map[topologyPair]int64
	// nonzero is how many more (or fewer) pairs are present than in the
	// sum of the sources.
	nonzero int
	// size memoizes the number of pairs in the sum of the sources; clones
	// share it. nil: not kept (computed when asked).
	size *sourcesSize
}

type sourcesSize struct {
	once sync.Once
	n    int
}

// empty is len(topologyCounts) == 0.
func (c *lazyCounts) empty() bool {
	if c.overlay == nil || c.nonzero >= 0 {
		// Without edits, or with no fewer pairs than the sources have, the
		// counts are empty exactly when the sources are.
		return len(c.sources) == 0 && c.nonzero == 0
	}
	return c.sourcePairs()+c.nonzero == 0
}

// sourcePairs is the number of distinct pairs in the sum of the sources.
func (c *lazyCounts) sourcePairs() int {
	count := func() int {
		n := 0
		for i := range c.sources {
			for v := range c.sources[i].counts {
				seen := false
				for j := 0; j < i && !seen; j++ {
					if c.sources[j].key == c.sources[i].key {
						_, seen = c.sources[j].counts[v]
					}
				}
				if !seen {
					n++
				}
			}
		}
		return n
	}
	if c.size == nil {
		return count()
	}
	c.size.once.Do(func() { c.size.n = count() })
	return c.size.n
}

func (c *lazyCounts) get(key, value string) int64 {
	if c.overlay != nil {
		if n, ok := c.overlay[topologyPair{key: key, value: value}]; ok {
			return n
		}
	}
	var n int64
	for i := range c.sources {
		if c.sources[i].key == key {
			n += c.sources[i].counts[value]
		}
	}
	return n
}

// add moves the count of (key, value) by delta in the overlay.
func (c *lazyCounts) add(key, value string, delta int64) {
	old := c.get(key, value)
	n := old + delta
	if c.overlay == nil {
		c.overlay = map[topologyPair]int64{}
	}
	c.overlay[topologyPair{key: key, value: value}] = n
	if old == 0 && n != 0 {
		c.nonzero++
	} else if old != 0 && n == 0 {
		c.nonzero--
	}
}

// clone copies the overlay and shares the sources.
func (c *lazyCounts) clone() *lazyCounts {
	d := *c
	d.overlay = maps.Clone(c.overlay)
	return &d
}

// compact merges the sources of each topology key into one map when that
// costs less than the lookups it saves: Filter reads every source of a key
// on each of up to visits nodes. Sums are unchanged, so get, empty and
// toMap answer as before.
func (c *lazyCounts) compact(visits int) {
	if c.overlay != nil || len(c.sources) < 2 {
		return
	}
	type group struct {
		first, n, size int
	}
	var order []string
	groups := map[string]*group{}
	for i := range c.sources {
		g := groups[c.sources[i].key]
		if g == nil {
			g = &group{first: i}
			groups[c.sources[i].key] = g
			order = append(order, c.sources[i].key)
		}
		g.n++
		g.size += len(c.sources[i].counts)
	}
	if len(order) == len(c.sources) {
		return
	}
	out := make([]countSource, 0, len(order))
	for _, key := range order {
		g := groups[key]
		if g.n == 1 || g.size > (g.n-1)*visits {
			for i := range c.sources {
				if c.sources[i].key == key {
					out = append(out, c.sources[i])
				}
			}
			continue
		}
		merged := make(map[string]int64, g.size)
		for i := range c.sources {
			if c.sources[i].key == key {
				for v, n := range c.sources[i].counts {
					merged[v] += n
				}
			}
		}
		out = append(out, countSource{key: key, counts: merged})
	}
	c.sources = out
}
