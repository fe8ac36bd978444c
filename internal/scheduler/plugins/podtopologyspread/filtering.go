package podtopologyspread

import (
	"fmt"
	"math"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Filter reasons, byte-exact with upstream.
const (
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ErrReasonNodeLabelNotMatch   = ErrReasonConstraintsNotMatch + " (missing required label)"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// criticalPaths tracks the two domains with the fewest matching pods; the
// first one is the global minimum. Keeping two (not one) lets AddPod/RemovePod
// update the minimum incrementally, as upstream does.
type criticalPaths [2]struct {
	TopologyValue string
	MatchNum      int
}

func newCriticalPaths() *criticalPaths {
	return &criticalPaths{{MatchNum: math.MaxInt32}, {MatchNum: math.MaxInt32}}
}

func (p *criticalPaths) update(value string, num int) {
	i := -1
	if value == p[0].TopologyValue {
		i = 0
	} else if value == p[1].TopologyValue {
		i = 1
	}
	if i >= 0 {
		p[i].MatchNum = num
		if p[0].MatchNum > p[1].MatchNum {
			p[0], p[1] = p[1], p[0]
		}
		return
	}
	if num < p[0].MatchNum {
		p[1] = p[0]
		p[0].TopologyValue, p[0].MatchNum = value, num
	} else if num < p[1].MatchNum {
		p[1].TopologyValue, p[1].MatchNum = value, num
	}
}

// preFilterState holds, per DoNotSchedule constraint, the matching pod count
// of every eligible domain and the critical paths.
type preFilterState struct {
	// pod is the incoming pod and selfMatch[i] whether constraint i selects
	// it (1) or not (0), so Filter does not re-match it on every node.
	pod           *v1.Pod
	selfMatch     []int
	constraints   []constraint
	criticalPaths []*criticalPaths
	// tpValueToMatchNum is PreFilter's count per domain; it is not written
	// afterwards, and clones share it. AddPod and RemovePod write overlay
	// (overlay.go), which Filter reads first; it is nil on the main cycle.
	tpValueToMatchNum []*domainCounts
	overlay           []countOverlay
	// idCounts[i], when the counting pass made it, is tpValueToMatchNum[i]
	// by the index's value ids (0 for values that are no domain), with
	// criticalPaths[i] already set; buildFastFilter takes it as is rather
	// than looking every domain up. PreFilter drops it once used.
	idCounts [][]int
	// fast answers Filter for snapshot nodes (fastfilter.go); nil once
	// the counts change.
	fast *fastFilter
	// rejections are Filter's two statuses (missing label, skew), made on
	// first use and shared by every node of the cycle and by clones (the
	// array is PreFilter's): a failed cycle's message counts statuses by
	// object first.
	rejections *[2]*framework.Status
}

// rejection returns the cycle's shared status: k 0 for a missing topology
// label (unresolvable), 1 for a skew over maxSkew.
func (s *preFilterState) rejection(k int) *framework.Status {
	if s.rejections == nil {
		s.rejections = &[2]*framework.Status{}
	}
	if s.rejections[k] == nil {
		if k == 0 {
			s.rejections[k] = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
		} else {
			s.rejections[k] = framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch)
		}
	}
	return s.rejections[k]
}

// Clone copies the critical paths and the overlay of edits; PreFilter's
// counts and the constraints are shared, as neither is ever written again.
func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return nil
	}
	c := &preFilterState{
		pod:               s.pod,
		selfMatch:         s.selfMatch,
		constraints:       s.constraints,
		criticalPaths:     make([]*criticalPaths, len(s.criticalPaths)),
		tpValueToMatchNum: s.tpValueToMatchNum,
		overlay:           cloneOverlay(s.overlay),
		rejections:        s.rejections,
	}
	for i, p := range s.criticalPaths {
		cp := *p
		c.criticalPaths[i] = &cp
	}
	return c
}

// minMatchNum is the global minimum, or 0 while there are fewer eligible
// domains than minDomains.
func (s *preFilterState) minMatchNum(i int, minDomains int32) int {
	if s.domains(i) < int(minDomains) {
		return 0
	}
	return s.criticalPaths[i][0].MatchNum
}

// self is 1 when constraint i selects pi (the incoming pod's answer is
// cached in selfMatch), else 0.
func (s *preFilterState) self(i int, pi *framework.PodInfo) int {
	if pi.Pod == s.pod && s.selfMatch != nil {
		return s.selfMatch[i]
	}
	if s.constraints[i].Selector.Matches(labels.Set(pi.Pod.Labels)) {
		return 1
	}
	return 0
}

// updateWithPod adds (delta +1) or removes (-1) a pod on node in the counts.
func (s *preFilterState) updateWithPod(updated, incoming *v1.Pod, node *v1.Node, delta int) {
	if s == nil || node == nil || updated.Namespace != incoming.Namespace {
		return
	}
	s.fast = nil
	if !nodeHasAllKeys(node.Labels, s.constraints) {
		return
	}
	// The incoming pod's required node affinity is only read for a
	// constraint that honours it: parsed then, once (preemption's dry run
	// calls this for every pod it takes off every node it examines).
	var required nodeaffinity.RequiredNodeAffinity
	parsed := false
	podLabels := labels.Set(updated.Labels)
	for i := range s.constraints {
		c := &s.constraints[i]
		if !c.Selector.Matches(podLabels) {
			continue
		}
		if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && !parsed {
			required, parsed = nodeaffinity.GetRequiredNodeAffinity(incoming), true
		}
		if !c.matchNodeInclusionPolicies(incoming, node, required) {
			continue
		}
		v := node.Labels[c.TopologyKey]
		s.criticalPaths[i].update(v, s.add(i, v, delta))
	}
}

// PreFilter counts matching pods per domain for the pod's DoNotSchedule
// constraints over all nodes that carry every topology key and pass the
// constraint's inclusion policies. Skip when there are no such constraints.
func (pl *Plugin) PreFilter(cs *framework.CycleState, pi *framework.PodInfo, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	pod := pi.Pod
	constraints, err := pl.constraintsFor(pod, v1.DoNotSchedule)
	if err != nil {
		return nil, framework.AsStatus(fmt.Errorf("get constraints from pod: %w", err))
	}
	if len(constraints) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	s := &preFilterState{
		pod:               pod,
		selfMatch:         make([]int, len(constraints)),
		constraints:       constraints,
		criticalPaths:     make([]*criticalPaths, len(constraints)),
		tpValueToMatchNum: make([]*domainCounts, len(constraints)),
		rejections:        &[2]*framework.Status{},
	}
	for i := range constraints {
		if constraints[i].Selector.Matches(labels.Set(pod.Labels)) {
			s.selfMatch[i] = 1
		}
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if !pl.countFromIndex(s, pod, nodes) {
		// Every node that carries all keys and passes the inclusion
		// policies takes part (walk.go).
		pl.index.Update(pl.handle, nodes)
		pl.walkIndexed(s, pod, nodes)
	}
	// buildFastFilter finds the critical paths in the same pass over the
	// counts that renumbers them; initCriticalPaths does it otherwise.
	s.fast = pl.buildFastFilter(s, nodes)
	s.idCounts = nil
	s.initCriticalPaths()
	cs.Write(preFilterStateKey, s)
	return nil, nil
}

// initCriticalPaths finds the two smallest domains of each constraint
// whose critical paths are not set yet. Ties go to the smaller domain name,
// so the result is what feeding the domains to update in name order gives,
// without sorting every domain.
func (s *preFilterState) initCriticalPaths() {
	for i, d := range s.tpValueToMatchNum {
		if s.criticalPaths[i] == nil {
			s.criticalPaths[i] = twoSmallest(d.asMap())
		}
	}
}

// twoSmallest returns the two domains smallest by (count, name).
func twoSmallest(m map[string]int) *criticalPaths {
	p := newCriticalPaths()
	n := 0
	for v, num := range m {
		p.offer(n, v, num)
		n++
	}
	return p
}

// offer puts domain v with num matching pods into the two smallest by
// (count, name), n being how many domains were offered before it.
func (p *criticalPaths) offer(n int, v string, num int) {
	less := func(j int) bool {
		return num < p[j].MatchNum || (num == p[j].MatchNum && v < p[j].TopologyValue)
	}
	switch {
	case n == 0 || less(0):
		p[1] = p[0]
		p[0].TopologyValue, p[0].MatchNum = v, num
	case n == 1 || less(1):
		p[1].TopologyValue, p[1].MatchNum = v, num
	}
}

// countFromIndex fills the counts from the per-snapshot class index when
// every node carrying all topology keys takes part: no taint policy and no
// node affinity to honour. It reports whether it did; the result equals the
// walk over nodes in PreFilter.
func (pl *Plugin) countFromIndex(s *preFilterState, pod *v1.Pod, nodes []*framework.NodeInfo) bool {
	hasRequired := len(pod.Spec.NodeSelector) > 0 || (pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil &&
		pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil)
	var keys []string
	for i := range s.constraints {
		c := &s.constraints[i]
		if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor ||
			(c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && hasRequired) {
			return false
		}
		if !slices.Contains(keys, c.TopologyKey) {
			keys = append(keys, c.TopologyKey)
		}
	}
	if !pl.index.Update(pl.handle, nodes) {
		return false
	}
	sort.Strings(keys)
	classes := pl.index.Classes()
	s.idCounts = make([][]int, len(s.constraints))
	for i := range s.constraints {
		sel := s.constraints[i].Selector
		kd := pl.index.KeyWithin(s.constraints[i].TopologyKey, keys)
		// When every value of the key is a domain (the domains are the
		// values of nodes carrying all keys: as many means the same), the
		// counts are kept by value id only (counts.go) and also serve the
		// fast filter (idCounts); otherwise, or should a counted value have
		// no id, they are summed into a map.
		names := pl.index.ValueNames(s.constraints[i].TopologyKey)
		if len(names) == len(kd.Values) && pl.index.NumNodes() == len(nodes) {
			_, idOf := pl.index.ValueIDs(s.constraints[i].TopologyKey)
			if byID, ok := countByID(kd, classes, pod, sel, idOf, len(names)); ok {
				p := newCriticalPaths()
				for id, v := range names {
					p.offer(id, v, byID[id])
				}
				s.tpValueToMatchNum[i] = idCountsOf(names, byID, nil)
				s.criticalPaths[i], s.idCounts[i] = p, byID
				continue
			}
		}
		m := kd.ZeroCounts()
		if !sel.Empty() {
			for c, counts := range kd.ByClass {
				if len(counts) == 0 || !classCounts(classes.Class(int32(c)), pod, sel) {
					continue
				}
				for v, n := range counts {
					m[v] += int(n)
				}
			}
		}
		s.tpValueToMatchNum[i] = mapCounts(m)
	}
	return true
}

// classCounts reports whether the pods of class pc count for a constraint
// of pod with selector sel.
func classCounts(pc *helper.PodClass, pod *v1.Pod, sel labels.Selector) bool {
	return !pc.Terminating && pc.Namespace == pod.Namespace && sel.Matches(pc.Labels)
}

// countByID sums kd's matching pods by value id (n ids); ok is false when a
// counted value has no id, and the caller counts by name instead.
func countByID(kd *helper.KeyDomains, classes *helper.PodClassIndex, pod *v1.Pod, sel labels.Selector, idOf map[string]int32, n int) ([]int, bool) {
	byID := make([]int, n)
	if sel.Empty() {
		return byID, true
	}
	for c, counts := range kd.ByClass {
		if len(counts) == 0 || !classCounts(classes.Class(int32(c)), pod, sel) {
			continue
		}
		for v, k := range counts {
			id, ok := idOf[v]
			if !ok {
				return nil, false
			}
			byID[id] += int(k)
		}
	}
	return byID, true
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (pl *Plugin) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod accounts a pod hypothetically placed on nodeInfo.
func (pl *Plugin) AddPod(cs *framework.CycleState, podToSchedule, podToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podToAdd.Pod, podToSchedule.Pod, nodeInfo.Node, 1)
	return nil
}

// RemovePod forgets a pod hypothetically removed from nodeInfo.
func (pl *Plugin) RemovePod(cs *framework.CycleState, podToSchedule, podToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podToRemove.Pod, podToSchedule.Pod, nodeInfo.Node, -1)
	return nil
}

func getPreFilterState(cs *framework.CycleState) (*preFilterState, error) {
	d := cs.Read(preFilterStateKey)
	if d == nil {
		return nil, fmt.Errorf("reading %q from cycleState: not found", preFilterStateKey)
	}
	s, ok := d.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v convert to podtopologyspread.preFilterState error", d)
	}
	return s, nil
}

// Filter rejects a node that lacks a topology key (unresolvable) or whose
// domain would exceed maxSkew over the global minimum with the pod added.
func (pl *Plugin) Filter(cs *framework.CycleState, pi *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.constraints) == 0 {
		return nil
	}
	if s.fast != nil {
		if st, ok := s.fast.filter(s, pi, nodeInfo); ok {
			return st
		}
	}
	node := nodeInfo.Node
	for i := range s.constraints {
		c := &s.constraints[i]
		value, ok := node.Labels[c.TopologyKey]
		if !ok {
			return s.rejection(0)
		}
		skew := s.count(i, value) + s.self(i, pi) - s.minMatchNum(i, c.MinDomains)
		if skew > int(c.MaxSkew) {
			return s.rejection(1)
		}
	}
	return nil
}
