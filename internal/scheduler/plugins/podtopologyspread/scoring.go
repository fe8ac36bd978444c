package podtopologyspread

import (
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// invalidScore marks ignored nodes between the min/max pass and the rewrite.
const invalidScore = -1

// preScoreState holds, per ScheduleAnyway constraint, the matching pod count
// of each domain that some feasible node belongs to, and the domain weight.
type preScoreState struct {
	constraints []constraint
	// ignoredNodes lack a topology key while every key is required; they score 0.
	ignoredNodes sets.Set[string]
	// topologyValueToPodCounts is indexed by constraint; hostname constraints
	// stay empty because Score counts the node's own pods.
	topologyValueToPodCounts []map[string]int64
	// topologyNormalizingWeight is ln(domains+2), so that small topologies
	// are not drowned by big ones.
	topologyNormalizingWeight []float64
	// counter answers the hostname constraints' per-node counts in Score
	// from the plugin's class cache (used with the plugin's lock held).
	counter *counter
	// columns, when set, hold each constraint's topology key per node;
	// ix, when set, reads them by node position (walk.go).
	columns []*helper.LabelColumn
	ix      *indexedLabels
}

// label is node.Labels[constraint i's key], from the column when there is one.
func (s *preScoreState) label(i int, ni *framework.NodeInfo) (string, bool) {
	if s.columns != nil {
		return s.columns[i].Get(ni)
	}
	v, ok := ni.Node.Labels[s.constraints[i].TopologyKey]
	return v, ok
}

// Clone shares the state: Score only reads it.
func (s *preScoreState) Clone() framework.StateData { return s }

func topologyNormalizingWeight(size int) float64 {
	return math.Log(float64(size + 2))
}

func scoreForCount(count int64, maxSkew int32, weight float64) float64 {
	return float64(count)*weight + float64(maxSkew-1)
}

func (pl *Plugin) initPreScoreState(s *preScoreState, pod *v1.Pod, filtered []*framework.NodeInfo, requireAllTopologies, indexed bool) error {
	var err error
	s.constraints, err = pl.constraintsFor(pod, v1.ScheduleAnyway)
	if err != nil {
		return err
	}
	if len(s.constraints) == 0 {
		return nil
	}
	s.topologyValueToPodCounts = make([]map[string]int64, len(s.constraints))
	for i := range s.constraints {
		s.topologyValueToPodCounts[i] = make(map[string]int64)
	}
	if indexed {
		s.columns = make([]*helper.LabelColumn, len(s.constraints))
		for i := range s.constraints {
			s.columns[i] = pl.index.Column(s.constraints[i].TopologyKey)
		}
	}
	var ix *indexedLabels
	if indexed {
		ix = pl.newIndexedLabels(s.constraints)
		s.ix = ix
	}
	for _, ni := range filtered {
		node := ni.Node
		p := ix.position(ni)
		if requireAllTopologies && !ix.hasAllKeys(p, node, s.constraints) {
			s.ignoredNodes.Insert(node.Name)
			continue
		}
		for i := range s.constraints {
			c := &s.constraints[i]
			if c.TopologyKey == v1.LabelHostname {
				continue
			}
			// A missing key yields the domain "" (only reachable with system defaults).
			value := ix.value(p, i, ni, s)
			if _, ok := s.topologyValueToPodCounts[i][value]; !ok {
				s.topologyValueToPodCounts[i][value] = 0
			}
		}
	}
	s.topologyNormalizingWeight = make([]float64, len(s.constraints))
	for i := range s.constraints {
		size := len(s.topologyValueToPodCounts[i])
		if s.constraints[i].TopologyKey == v1.LabelHostname {
			size = len(filtered) - s.ignoredNodes.Len()
		}
		s.topologyNormalizingWeight[i] = topologyNormalizingWeight(size)
	}
	return nil
}

// PreScore finds the domains of the feasible nodes and counts matching pods
// in them across all nodes that pass the inclusion policies.
func (pl *Plugin) PreScore(cs *framework.CycleState, pi *framework.PodInfo, filtered []*framework.NodeInfo) *framework.Status {
	allNodes := pl.handle.Nodes()
	if len(allNodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	pod := pi.Pod
	s := &preScoreState{ignoredNodes: sets.New[string]()}
	// Only the pod's own constraints (or non-system defaults) require every
	// key, so that nodes without a zone still spread by hostname.
	requireAllTopologies := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	pl.mu.Lock()
	defer pl.mu.Unlock()
	indexed := pl.index.Update(pl.handle, allNodes)
	if err := pl.initPreScoreState(s, pod, filtered, requireAllTopologies, indexed); err != nil {
		return framework.AsStatus(fmt.Errorf("calculating preScoreState: %w", err))
	}
	if len(s.constraints) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	counter := pl.newCounter(s.constraints, pod.Namespace, len(allNodes))
	s.counter = counter
	if indexed && pl.preScoreFromIndex(s, pod, requireAllTopologies) {
		cs.Write(preScoreStateKey, s)
		return nil
	}
	for _, ni := range allNodes {
		node := ni.Node
		if node == nil {
			continue
		}
		if requireAllTopologies && !nodeHasAllKeys(node.Labels, s.constraints) {
			continue
		}
		for i := range s.constraints {
			c := &s.constraints[i]
			counts := s.topologyValueToPodCounts[i]
			value := node.Labels[c.TopologyKey]
			// Only domains of feasible nodes are counted (never hostname ones).
			if _, ok := counts[value]; !ok {
				continue
			}
			if !c.matchNodeInclusionPolicies(pod, node, required) {
				continue
			}
			counts[value] += int64(counter.count(i, ni))
		}
	}
	cs.Write(preScoreStateKey, s)
	return nil
}

func getPreScoreState(cs *framework.CycleState) (*preScoreState, error) {
	d := cs.Read(preScoreStateKey)
	if d == nil {
		return nil, fmt.Errorf("reading %q from cycleState: not found", preScoreStateKey)
	}
	s, ok := d.(*preScoreState)
	if !ok {
		return nil, fmt.Errorf("%+v convert to podtopologyspread.preScoreState error", d)
	}
	return s, nil
}

// Score is round(Σ count·weight + maxSkew−1) over the constraints whose key
// the node carries; lower is better (NormalizeScore inverts it).
func (pl *Plugin) Score(cs *framework.CycleState, pi *framework.PodInfo, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := getPreScoreState(cs)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	node := nodeInfo.Node
	if s.ignoredNodes.Has(node.Name) {
		return 0, nil
	}
	var score float64
	p := s.ix.position(nodeInfo)
	for i := range s.constraints {
		c := &s.constraints[i]
		value, ok := s.ix.label(p, i, nodeInfo, s)
		if !ok {
			continue
		}
		var count int64
		if c.TopologyKey == v1.LabelHostname {
			count = pl.countOnNode(s, i, nodeInfo, pi.Pod.Namespace)
		} else {
			count = s.topologyValueToPodCounts[i][value]
		}
		score += scoreForCount(count, c.MaxSkew, s.topologyNormalizingWeight[i])
	}
	return int64(math.Round(score)), nil
}

// countOnNode is countPodsMatchSelector(nodeInfo.Pods, constraint i) through
// the class cache: a selector is matched once per pod class, not per pod.
func (pl *Plugin) countOnNode(s *preScoreState, i int, nodeInfo *framework.NodeInfo, ns string) int64 {
	if s.counter == nil {
		return int64(countPodsMatchSelector(nodeInfo.Pods, s.constraints[i].Selector, ns))
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return int64(s.counter.count(i, nodeInfo))
}

// preScoreFromIndex fills the domain counts from the per-snapshot class
// index instead of walking every node: from the per-domain totals when the
// walk would count every node that carries a key, otherwise (an inclusion
// policy filters nodes, or a node lacks a key where that matters) from the
// nodes holding selected pods. It reports false only when the index cannot
// follow the handle's snapshot; the result equals the walk in PreScore.
func (pl *Plugin) preScoreFromIndex(s *preScoreState, pod *v1.Pod, requireAll bool) bool {
	hasRequired := len(pod.Spec.NodeSelector) > 0 || (pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil &&
		pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil)
	for i := range s.constraints {
		c := &s.constraints[i]
		if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor || (c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && hasRequired) {
			pl.preScoreFromClassNodes(s, pod, requireAll)
			return true
		}
	}
	for i := range s.constraints {
		c := &s.constraints[i]
		// Nodes lacking a key are skipped (requireAll) or fall in the ""
		// domain; the per-domain totals cannot tell, so visit the nodes.
		if requireAll && pl.index.Missing(c.TopologyKey) > 0 {
			pl.preScoreFromClassNodes(s, pod, requireAll)
			return true
		}
		if c.TopologyKey == v1.LabelHostname {
			continue
		}
		if _, ok := s.topologyValueToPodCounts[i][""]; ok && pl.index.Missing(c.TopologyKey) > 0 {
			pl.preScoreFromClassNodes(s, pod, requireAll)
			return true
		}
	}
	classes := pl.index.Classes()
	for i := range s.constraints {
		c := &s.constraints[i]
		if c.TopologyKey == v1.LabelHostname || c.Selector.Empty() {
			continue
		}
		kd := pl.index.Key(c.TopologyKey)
		counts := s.topologyValueToPodCounts[i]
		for id, byDomain := range kd.ByClass {
			if len(byDomain) == 0 {
				continue
			}
			pc := classes.Class(int32(id))
			if pc.Terminating || pc.Namespace != pod.Namespace || !c.Selector.Matches(pc.Labels) {
				continue
			}
			for v := range counts {
				counts[v] += byDomain[v]
			}
		}
	}
	return true
}

// preScoreFromClassNodes fills the domain counts by visiting only the nodes
// that hold pods the constraints select, applying the inclusion policies to
// each. Nodes without such pods add nothing to the walk in PreScore, and the
// domains were fixed by initPreScoreState, so the result is the walk's.
func (pl *Plugin) preScoreFromClassNodes(s *preScoreState, pod *v1.Pod, requireAll bool) {
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	byClass := pl.index.NodesByClass()
	classes := pl.index.Classes()
	// included caches the inclusion policies per node and constraint.
	included := map[*framework.NodeInfo]bool{}
	for i := range s.constraints {
		c := &s.constraints[i]
		if c.TopologyKey == v1.LabelHostname || c.Selector.Empty() {
			continue
		}
		clear(included)
		counts := s.topologyValueToPodCounts[i]
		for id, nodes := range byClass {
			if len(nodes) == 0 {
				continue
			}
			pc := classes.Class(int32(id))
			if pc.Terminating || pc.Namespace != pod.Namespace || !c.Selector.Matches(pc.Labels) {
				continue
			}
			for ni, n := range nodes {
				node := ni.Node
				if requireAll && !nodeHasAllKeys(node.Labels, s.constraints) {
					continue
				}
				value := node.Labels[c.TopologyKey]
				if _, ok := counts[value]; !ok {
					continue
				}
				in, seen := included[ni]
				if !seen {
					in = c.matchNodeInclusionPolicies(pod, node, required)
					included[ni] = in
				}
				if in {
					counts[value] += n
				}
			}
		}
	}
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *Plugin) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore gives ignored nodes 0 and the others
// 100·(max+min−score)/max, or 100 when every score is 0.
func (pl *Plugin) NormalizeScore(cs *framework.CycleState, _ *framework.PodInfo, scores framework.NodeScoreList) *framework.Status {
	s, err := getPreScoreState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for i := range scores {
		if s.ignoredNodes.Has(scores[i].Name) {
			scores[i].Score = invalidScore
			continue
		}
		if scores[i].Score < minScore {
			minScore = scores[i].Score
		}
		if scores[i].Score > maxScore {
			maxScore = scores[i].Score
		}
	}
	for i := range scores {
		if scores[i].Score == invalidScore {
			scores[i].Score = 0
			continue
		}
		if maxScore == 0 {
			scores[i].Score = framework.MaxNodeScore
			continue
		}
		scores[i].Score = framework.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
	}
	return nil
}
