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
	// fast, when set, holds the feasible nodes' raw scores (fastscore.go).
	fast *fastScores
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

// initPreScoreState finds the domains of the feasible nodes (s.constraints
// set) by reading their labels, through the index when indexed.
func (pl *Plugin) initPreScoreState(s *preScoreState, filtered []*framework.NodeInfo, requireAllTopologies, indexed bool) {
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
		ix = pl.indexedLabelsFor(s.constraints)
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
	s.setWeights(len(filtered))
}

// setWeights sets each constraint's normalizing weight from its number of
// domains; a hostname constraint has one per feasible node not ignored.
func (s *preScoreState) setWeights(feasible int) {
	s.topologyNormalizingWeight = make([]float64, len(s.constraints))
	for i := range s.constraints {
		size := len(s.topologyValueToPodCounts[i])
		if s.constraints[i].TopologyKey == v1.LabelHostname {
			size = feasible - s.ignoredNodes.Len()
		}
		s.topologyNormalizingWeight[i] = topologyNormalizingWeight(size)
	}
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
	// Only the fast path below remembers its state; a memo of an earlier
	// PreScore must not outlive this one (it could be for this very cs).
	pl.lastPreScore.Store(nil)
	indexed := pl.index.Update(pl.handle, allNodes)
	var err error
	if s.constraints, err = pl.constraintsFor(pod, v1.ScheduleAnyway); err != nil {
		return framework.AsStatus(fmt.Errorf("calculating preScoreState: %w", err))
	}
	if len(s.constraints) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	if indexed {
		sels := pl.selectionsLocked()
		if at := positionsOf(sels.at, allNodes, filtered, pl.index.Positions()); at != nil {
			sels.at = at
			pl.preScoreFast(s, pod, filtered, at, requireAllTopologies)
			cs.Write(preScoreStateKey, s)
			pl.lastPreScore.Store(&preScoreMemo{cs: cs, s: s})
			return nil
		}
	}
	pl.initPreScoreState(s, filtered, requireAllTopologies, indexed)
	if indexed {
		pl.preScoreFromIndex(s, pod, requireAllTopologies)
		cs.Write(preScoreStateKey, s)
		return nil
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	counter := pl.newCounter(s.constraints, pod.Namespace, len(allNodes))
	s.counter = counter
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
	s, err := pl.preScoreStateOf(cs)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	return pl.score(s, pi, nodeInfo), nil
}

// score is Score once the state is read.
func (pl *Plugin) score(s *preScoreState, pi *framework.PodInfo, nodeInfo *framework.NodeInfo) int64 {
	if raw, ok := s.fast.next(nodeInfo); ok {
		return raw
	}
	node := nodeInfo.Node
	if s.ignoredNodes.Has(node.Name) {
		return 0
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
	return roundScore(score)
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

// preScoreFromIndex fills the domain counts from the per-snapshot
// selections (shapes.go) instead of walking every node: from a selection's
// per-domain totals when the walk would count every node that carries a
// key, otherwise (an inclusion policy filters nodes, or a node lacks a key
// where that matters) from the nodes holding selected pods. s.ix must be
// set; the result equals the walk in PreScore.
func (pl *Plugin) preScoreFromIndex(s *preScoreState, pod *v1.Pod, requireAll bool) {
	hasRequired := len(pod.Spec.NodeSelector) > 0 || (pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil &&
		pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil)
	for i := range s.constraints {
		c := &s.constraints[i]
		if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor || (c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && hasRequired) {
			pl.preScoreFromSelectedNodes(s, pod, requireAll)
			return
		}
	}
	for i := range s.constraints {
		c := &s.constraints[i]
		// Nodes lacking a key are skipped (requireAll) or fall in the ""
		// domain; the per-domain totals cannot tell, so visit the nodes.
		if requireAll && pl.index.Missing(c.TopologyKey) > 0 {
			pl.preScoreFromSelectedNodes(s, pod, requireAll)
			return
		}
		if c.TopologyKey == v1.LabelHostname {
			continue
		}
		if _, ok := s.topologyValueToPodCounts[i][""]; ok && pl.index.Missing(c.TopologyKey) > 0 {
			pl.preScoreFromSelectedNodes(s, pod, requireAll)
			return
		}
	}
	sels := pl.selectionsLocked()
	for i := range s.constraints {
		c := &s.constraints[i]
		if c.TopologyKey == v1.LabelHostname {
			continue
		}
		sel := sels.get(pod.Namespace, c.Selector)
		if sel == nil {
			continue
		}
		t := sel.totals(pl.index, c.TopologyKey)
		_, values := pl.index.ValueIDs(c.TopologyKey)
		counts := s.topologyValueToPodCounts[i]
		for v := range counts {
			if id, ok := values[v]; ok {
				counts[v] += t.counts[id]
			}
		}
	}
}

// preScoreFromSelectedNodes fills the domain counts by visiting only the
// nodes that hold pods a constraint selects, applying the inclusion
// policies to each. Nodes without such pods add nothing to the walk in
// PreScore, and the domains were fixed by initPreScoreState, so the result
// is the walk's.
func (pl *Plugin) preScoreFromSelectedNodes(s *preScoreState, pod *v1.Pod, requireAll bool) {
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	sels := pl.selectionsLocked()
	nodes := pl.handle.Nodes()
	for i := range s.constraints {
		c := &s.constraints[i]
		if c.TopologyKey == v1.LabelHostname {
			continue
		}
		sel := sels.get(pod.Namespace, c.Selector)
		if sel == nil {
			continue
		}
		counts := s.topologyValueToPodCounts[i]
		included := sels.includer(c, pod, required, nodes)
		for _, p := range sel.nodes {
			if requireAll && !s.ix.holders.Has(p) {
				continue
			}
			value := ""
			if id := s.ix.ids[i][p]; id >= 0 {
				value = s.ix.names[i][id]
			}
			if _, ok := counts[value]; !ok {
				continue
			}
			if included.has(p) {
				counts[value] += int64(sel.perNode[p])
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
	// Without ignored nodes the names need not be read (NormalizeReadsNames).
	anyIgnored := s.ignoredNodes.Len() > 0
	for i := range scores {
		if anyIgnored && s.ignoredNodes.Has(scores[i].Name) {
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
	// The raw scores of a cycle take few distinct values close together:
	// each value's quotient is worked out once (a division costs more
	// than the rest of a node's normalization). -1 marks a value not yet
	// seen; results are never negative.
	var quotients [256]int64
	byTable := maxScore > 0 && maxScore-minScore < int64(len(quotients))
	if byTable {
		for i := range quotients {
			quotients[i] = -1
		}
	}
	for i := range scores {
		v := scores[i].Score
		switch {
		case v == invalidScore:
			scores[i].Score = 0
		case maxScore == 0:
			scores[i].Score = framework.MaxNodeScore
		case byTable:
			q := &quotients[v-minScore]
			if *q < 0 {
				*q = framework.MaxNodeScore * (maxScore + minScore - v) / maxScore
			}
			scores[i].Score = *q
		default:
			scores[i].Score = framework.MaxNodeScore * (maxScore + minScore - v) / maxScore
		}
	}
	return nil
}
