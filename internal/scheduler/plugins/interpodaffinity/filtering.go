package interpodaffinity

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Filter reasons, byte-exact with upstream.
const (
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	ErrReasonAffinityRulesNotMatch             = "node(s) didn't match pod affinity rules"
	ErrReasonAntiAffinityRulesNotMatch         = "node(s) didn't match pod anti-affinity rules"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// topologyCounts counts matching pods per topology domain. Entries that drop
// to zero are deleted, so len() says whether anything matched anywhere. The
// state keeps its counts as lazyCounts (index.go), which read as one.
type topologyCounts map[topologyPair]int64

func (c *lazyCounts) update(node *v1.Node, key string, delta int64) {
	value, ok := node.Labels[key]
	if !ok {
		return
	}
	c.add(key, value, delta)
}

// updateWithAffinityTerms counts pod in every term's domain, but only if pod
// matches all the terms (required affinity terms are ANDed).
func (c *lazyCounts) updateWithAffinityTerms(terms []framework.AffinityTerm, pod *v1.Pod, nsLabels labels.Set, node *v1.Node, delta int64) {
	if podMatchesAllTerms(terms, pod, nsLabels) {
		for i := range terms {
			c.update(node, terms[i].TopologyKey, delta)
		}
	}
}

// updateWithAntiAffinityTerms counts pod in the domain of each term it matches.
func (c *lazyCounts) updateWithAntiAffinityTerms(terms []framework.AffinityTerm, pod *v1.Pod, nsLabels labels.Set, node *v1.Node, delta int64) {
	for i := range terms {
		if terms[i].Matches(pod, nsLabels) {
			c.update(node, terms[i].TopologyKey, delta)
		}
	}
}

// preFilterState is what Filter needs, computed once per cycle.
type preFilterState struct {
	// existingAntiAffinityCounts: domains where an existing pod's required
	// anti-affinity term matches the incoming pod.
	existingAntiAffinityCounts *lazyCounts
	// affinityCounts: domains holding pods that match all incoming required affinity terms.
	affinityCounts *lazyCounts
	// antiAffinityCounts: domains holding pods that match an incoming required anti-affinity term.
	antiAffinityCounts *lazyCounts
	// The incoming pod, its required terms with namespace selectors resolved,
	// and its namespace's labels.
	pod                  *v1.Pod
	requiredAffinity     []framework.AffinityTerm
	requiredAntiAffinity []framework.AffinityTerm
	namespaceLabels      labels.Set
	// fast answers Filter for the snapshot's nodes (fastfilter.go); nil
	// once the counts change.
	fast *fastFilter
	// rejections are Filter's statuses for other nodes (preemption's
	// copies), one per reason, made on first use; PreFilter makes the
	// array, which clones share, so that the dry run's nodes rejected
	// alike share one status (docs/scheduler.md#failed-cycles-by-position).
	rejections *[3]*framework.Status
}

// rejection returns the shared status for reason i of rejectionReasons.
func (s *preFilterState) rejection(i int) *framework.Status {
	if s.rejections == nil {
		s.rejections = &[3]*framework.Status{}
	}
	if s.rejections[i] == nil {
		s.rejections[i] = framework.NewStatus(rejectionCodes[i], rejectionReasons[i])
	}
	return s.rejections[i]
}

// Clone copies the counts' overlays of edits and shares their sources; the
// terms and pod are never mutated.
func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return nil
	}
	c := *s
	c.fast = nil
	c.existingAntiAffinityCounts = s.existingAntiAffinityCounts.clone()
	c.affinityCounts = s.affinityCounts.clone()
	c.antiAffinityCounts = s.antiAffinityCounts.clone()
	return &c
}

// updateWithPod adds (delta +1) or removes (-1) an existing pod on node.
func (s *preFilterState) updateWithPod(pi *framework.PodInfo, node *v1.Node, delta int64) {
	if s == nil || node == nil {
		return
	}
	s.fast = nil
	s.existingAntiAffinityCounts.updateWithAntiAffinityTerms(pi.RequiredAntiAffinityTerms, s.pod, s.namespaceLabels, node, delta)
	// The incoming pod's terms carry resolved namespaces, so no labels are needed.
	s.affinityCounts.updateWithAffinityTerms(s.requiredAffinity, pi.Pod, nil, node, delta)
	s.antiAffinityCounts.updateWithAntiAffinityTerms(s.requiredAntiAffinity, pi.Pod, nil, node, delta)
}

// PreFilter counts, per topology domain, the existing pods relevant to the
// incoming pod's required terms and the existing pods whose required
// anti-affinity rejects it. It skips Filter when there is nothing to check.
func (pl *Plugin) PreFilter(cs *framework.CycleState, pi *framework.PodInfo, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if pi.ParseError != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %+v", pi.ParseError))
	}
	pod := pi.Pod
	s := &preFilterState{
		pod:                  pod,
		requiredAffinity:     pl.resolveNamespaces(pi.RequiredAffinityTerms),
		requiredAntiAffinity: pl.resolveNamespaces(pi.RequiredAntiAffinityTerms),
		namespaceLabels:      pl.namespaceLabels(pod.Namespace),
		rejections:           &[3]*framework.Status{},
	}

	pl.mu.Lock()
	defer pl.mu.Unlock()
	cx := pl.countExisting(s, nodes)
	if s.existingAntiAffinityCounts.empty() && len(s.requiredAffinity) == 0 && len(s.requiredAntiAffinity) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	for _, c := range []*lazyCounts{s.existingAntiAffinityCounts, s.affinityCounts, s.antiAffinityCounts} {
		c.compact(len(nodes))
	}
	s.fast = buildFastFilter(s, cx.domains)
	cs.Write(preFilterStateKey, s)
	return nil, nil
}

// syncIndex brings the existing-pod index up to date for nodes and returns
// the index to read existing anti-affinity terms from (the handle's list of
// nodes with such pods) and the one to read pod classes from (nodes). With
// a handle that logs bound pods both are the long-lived index.
func (pl *Plugin) syncIndex(nodes []*framework.NodeInfo) (terms, classes *existingIndex) {
	if pl.index.domains.Update(pl.handle, nodes) {
		return pl.index, pl.index
	}
	terms = newExistingIndex()
	terms.domains.Update(pl.handle, pl.handle.HavePodsWithRequiredAntiAffinity())
	return terms, pl.index
}

// countExisting fills the three counts from the index: each distinct term
// and pod class is matched against once, and the per-domain counts are
// shared with the index rather than copied. It returns the index over nodes.
func (pl *Plugin) countExisting(s *preFilterState, nodes []*framework.NodeInfo) *existingIndex {
	tx, cx := pl.syncIndex(nodes)

	s.existingAntiAffinityCounts = &lazyCounts{size: &sourcesSize{}}
	var class int32 = -1
	for id, m := range tx.termDomains {
		if len(m) == 0 {
			continue
		}
		if class < 0 {
			class = tx.domains.Classes().Intern(s.pod)
		}
		t := &tx.terms.terms[id]
		if tx.terms.matches(id, class, s.pod, s.namespaceLabels) {
			s.existingAntiAffinityCounts.sources = append(s.existingAntiAffinityCounts.sources, countSource{key: t.TopologyKey, counts: m})
		}
	}

	s.affinityCounts = &lazyCounts{size: &sourcesSize{}}
	s.antiAffinityCounts = &lazyCounts{size: &sourcesSize{}}
	if len(s.requiredAffinity) == 0 && len(s.requiredAntiAffinity) == 0 {
		return cx
	}
	classes := cx.domains.Classes()
	// The incoming pod's terms carry resolved namespaces: no labels needed.
	if len(s.requiredAffinity) > 0 {
		keys := make([]*helper.KeyDomains, len(s.requiredAffinity))
		for i := range s.requiredAffinity {
			keys[i] = cx.domains.Key(s.requiredAffinity[i].TopologyKey)
		}
		for c := 0; c < classes.NumClasses(); c++ {
			pc := classes.Class(int32(c))
			all := true
			for i := range s.requiredAffinity {
				if !termMatchesClass(&s.requiredAffinity[i], pc, nil) {
					all = false
					break
				}
			}
			if !all {
				continue
			}
			for i := range s.requiredAffinity {
				if c < len(keys[i].ByClass) && len(keys[i].ByClass[c]) > 0 {
					s.affinityCounts.sources = append(s.affinityCounts.sources, countSource{key: s.requiredAffinity[i].TopologyKey, counts: keys[i].ByClass[c]})
				}
			}
		}
	}
	for i := range s.requiredAntiAffinity {
		t := &s.requiredAntiAffinity[i]
		kd := cx.domains.Key(t.TopologyKey)
		for c := range kd.ByClass {
			if len(kd.ByClass[c]) > 0 && termMatchesClass(t, classes.Class(int32(c)), nil) {
				s.antiAffinityCounts.sources = append(s.antiAffinityCounts.sources, countSource{key: t.TopologyKey, counts: kd.ByClass[c]})
			}
		}
	}
	return cx
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (pl *Plugin) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod accounts a pod hypothetically placed on nodeInfo.
func (pl *Plugin) AddPod(cs *framework.CycleState, _ *framework.PodInfo, podToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podToAdd, nodeInfo.Node, 1)
	return nil
}

// RemovePod forgets a pod hypothetically removed from nodeInfo.
func (pl *Plugin) RemovePod(cs *framework.CycleState, _ *framework.PodInfo, podToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podToRemove, nodeInfo.Node, -1)
	return nil
}

func getPreFilterState(cs *framework.CycleState) (*preFilterState, error) {
	d := cs.Read(preFilterStateKey)
	if d == nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preFilterStateKey, errNotFound)
	}
	s, ok := d.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to interpodaffinity.state error", d)
	}
	return s, nil
}

var errNotFound = fmt.Errorf("not found")

// Filter checks, in upstream order, the incoming pod's affinity, its
// anti-affinity, and the existing pods' anti-affinity towards it.
func (pl *Plugin) Filter(cs *framework.CycleState, _ *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.fast != nil {
		if st, ok := s.fast.filter(nodeInfo); ok {
			return st
		}
	}
	node := nodeInfo.Node
	if !satisfyPodAffinity(s, node) {
		return s.rejection(0)
	}
	if !satisfyPodAntiAffinity(s, node) {
		return s.rejection(1)
	}
	if !satisfyExistingPodsAntiAffinity(s, node) {
		return s.rejection(2)
	}
	return nil
}

// satisfyPodAffinity: the node must carry every term's topology key and each
// term's domain must already hold a matching pod. The first pod of a group
// that selects itself passes when no matching pod exists anywhere.
func satisfyPodAffinity(s *preFilterState, node *v1.Node) bool {
	podsExist := true
	for i := range s.requiredAffinity {
		key := s.requiredAffinity[i].TopologyKey
		value, ok := node.Labels[key]
		if !ok {
			return false
		}
		if s.affinityCounts.get(key, value) <= 0 {
			podsExist = false
		}
	}
	if podsExist {
		return true
	}
	return s.affinityCounts.empty() && podMatchesAllTerms(s.requiredAffinity, s.pod, s.namespaceLabels)
}

// satisfyPodAntiAffinity: no term's domain on this node may hold a matching pod.
func satisfyPodAntiAffinity(s *preFilterState, node *v1.Node) bool {
	if s.antiAffinityCounts.empty() {
		return true
	}
	for i := range s.requiredAntiAffinity {
		key := s.requiredAntiAffinity[i].TopologyKey
		if value, ok := node.Labels[key]; ok && s.antiAffinityCounts.get(key, value) > 0 {
			return false
		}
	}
	return true
}

// satisfyExistingPodsAntiAffinity: no label of the node may be a domain where
// an existing pod's anti-affinity rejects the incoming pod.
func satisfyExistingPodsAntiAffinity(s *preFilterState, node *v1.Node) bool {
	c := s.existingAntiAffinityCounts
	if c.overlay == nil {
		// Source counts are positive, so any hit is a rejection.
		for i := range c.sources {
			if v, ok := node.Labels[c.sources[i].key]; ok && c.sources[i].counts[v] > 0 {
				return false
			}
		}
		return true
	}
	// Edited counts (preemption's dry run): any label of the node whose
	// pair counts above zero; only existence matters, so order is irrelevant.
	for k, v := range node.Labels {
		if c.get(k, v) > 0 {
			return false
		}
	}
	return true
}
