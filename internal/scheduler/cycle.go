package scheduler

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	"github.com/berth-sim/berth/internal/scheduler/plugins/nodeaffinity"
)

// ErrNoNodesAvailable is the whole message when the cluster has no node.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// Percentage and minimum of nodes to find feasible before scoring (docs/scheduler.md#how-many-nodes).
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// NumFeasibleNodesToFind is how many feasible nodes the scheduler looks for
// in a cluster of n nodes with the adaptive default percentage.
func NumFeasibleNodesToFind(n int) int { return numFeasibleNodesToFind(0, n) }

// numFeasibleNodesToFind honours a configured percentageOfNodesToScore;
// 0 means adaptive. Below 100 nodes every node is examined either way.
func numFeasibleNodesToFind(percentage int32, n int) int {
	if n < minFeasibleNodesToFind {
		return n
	}
	pct := int(percentage)
	if pct == 0 {
		pct = 50 - n/125
		if pct < minFeasibleNodesPercentageToFind {
			pct = minFeasibleNodesPercentageToFind
		}
	}
	k := n * pct / 100
	if k < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return k
}

// Diagnosis is the record of one scheduling attempt, per node and per
// plugin, for explanations.
type Diagnosis struct {
	NumAllNodes int
	// NodeToStatus holds each examined node's rejecting status (Status.Plugin
	// names the plugin); nodes not listed got Absent (nil: they were not
	// examined because enough feasible nodes were found). After a successful
	// attempt it, Feasible, Scores and Totals are only kept with RecordScores.
	// Without RecordScores a failed attempt keeps the statuses by position
	// (ByPosition), which LastDiagnosis turns into the map.
	NodeToStatus framework.NodeToStatus
	// PreFilterStatus is set when PreFilter rejected the pod for all nodes.
	PreFilterStatus *framework.Status
	// NarrowingPlugins returned a PreFilterResult limiting the nodes.
	NarrowingPlugins []string
	PostFilterStatus *framework.Status
	// Feasible lists the feasible nodes found, in search order; Scores the
	// per-plugin normalized scores over them and Totals the weighted sums.
	Feasible []string
	Scores   map[string]framework.NodeScoreList
	Totals   []int64
	// SelectedNode is the chosen node ("" on failure); Message the failure text.
	SelectedNode string
	Message      string
	// NominatedNode and Victims record a preemption this attempt carried out.
	NominatedNode string
	Victims       []*v1.Pod
}

// rejection is a node's rejecting status; the node's name is only read
// when the rejections are reported (most cycles succeed and drop them).
type rejection struct {
	node   *framework.NodeInfo
	status *framework.Status
	// pos is the node's snapshot position (-1: none), whose name the
	// snapshot keeps in a dense list.
	pos int
}

// cycleResult is what one attempt decided.
type cycleResult struct {
	node string
	// status is the rejection (Unschedulable/U&U) or error; nil on success.
	status *framework.Status
	diag   *Diagnosis
	// preemption is PostFilter's outcome: a nominated node and its victims.
	preemption *framework.PostFilterResult
	// state is the cycle's state, for Reserve and PreBind after a success.
	state *framework.CycleState
	// late is set when Reserve or PreBind failed after a node was chosen.
	late bool
}

// podSignature identifies the pod fields the static filters read: node
// name, node selector, node affinity and tolerations, each part length
// prefixed (the API types' protobuf encoding is deterministic; selector
// keys are sorted).
func podSignature(pod *v1.Pod) string {
	b := make([]byte, 0, 256)
	part := func(p []byte) { b = append(binary.AppendUvarint(b, uint64(len(p))), p...) }
	part([]byte(pod.Spec.NodeName))
	keys := make([]string, 0, len(pod.Spec.NodeSelector))
	for k := range pod.Spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		part([]byte(k))
		part([]byte(pod.Spec.NodeSelector[k]))
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		m, err := a.NodeAffinity.Marshal()
		if err != nil {
			return ""
		}
		b = append(b, 1)
		part(m)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(pod.Spec.Tolerations)))
	for i := range pod.Spec.Tolerations {
		m, err := pod.Spec.Tolerations[i].Marshal()
		if err != nil {
			return ""
		}
		part(m)
	}
	return string(b)
}

// scheduleOne runs one scheduling cycle for pod against the snapshot (docs/scheduler.md#the-cycle).
func (sc *Scheduler) scheduleOne(s *cluster.State, pi *framework.PodInfo) cycleResult {
	fw, snap := sc.fw, sc.handle.snap
	allNodes := snap.nodes
	diag := &Diagnosis{NumAllNodes: len(allNodes), NodeToStatus: framework.NodeToStatus{Statuses: map[string]*framework.Status{}}}
	res := cycleResult{diag: diag}
	if len(allNodes) == 0 {
		res.status = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrNoNodesAvailable.Error())
		diag.Message = ErrNoNodesAvailable.Error()
		return res
	}
	state := framework.NewCycleState()
	res.state = state
	pre, st, narrowing := fw.runPreFilterPlugins(state, pi, allNodes)
	diag.NarrowingPlugins = narrowing
	if !st.IsSuccess() {
		if !st.IsRejected() {
			res.status = st
			diag.Message = st.Message()
			return res
		}
		diag.PreFilterStatus = st
		diag.NodeToStatus.Absent = st
		return sc.fail(state, pi, res, &helper.FitError{NumAllNodes: len(allNodes), PreFilterMsg: st.Message(), NodeToStatus: diag.NodeToStatus})
	}

	if node := sc.tryNominatedNode(state, pi); node != "" {
		res.node, diag.SelectedNode = node, node
		if sc.RecordScores {
			diag.Feasible = []string{node}
		}
		return res
	}

	nodes := allNodes
	if !pre.AllNodes() {
		nodes = snap.narrowed(pre.NodeNames)
		diag.NodeToStatus.Absent = framework.NewStatus(framework.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", narrowing))
	}

	feasible, err := sc.findFeasible(s, state, pi, nodes, diag)
	if err != nil {
		res.status = err
		diag.Message = err.Message()
		return res
	}
	if len(feasible) == 0 && !sc.RecordScores && sc.rejectedByPosition(diag) {
		return sc.fail(state, pi, res, &helper.FitError{NumAllNodes: len(allNodes), NodeToStatus: diag.NodeToStatus})
	}
	if len(feasible) == 0 || sc.RecordScores {
		if len(diag.NodeToStatus.Statuses) == 0 {
			diag.NodeToStatus.Statuses = make(map[string]*framework.Status, len(sc.rejected))
		}
		for _, r := range sc.rejected {
			diag.NodeToStatus.Statuses[snap.nameAt(r.pos, r.node)] = r.status
		}
	}
	if len(feasible) == 0 {
		return sc.fail(state, pi, res, &helper.FitError{NumAllNodes: len(allNodes), NodeToStatus: diag.NodeToStatus})
	}
	if sc.RecordScores {
		for _, ni := range feasible {
			diag.Feasible = append(diag.Feasible, ni.Name())
		}
	}
	if len(feasible) == 1 {
		res.node = feasible[0].Name()
		diag.SelectedNode = res.node
		return res
	}
	totals, perPlugin, sst := fw.runScorePlugins(state, pi, feasible, sc.RecordScores, snap)
	if !sst.IsSuccess() {
		res.status = sst
		diag.Message = sst.Message()
		return res
	}
	if sc.RecordScores {
		diag.Scores, diag.Totals = perPlugin, totals
	}
	res.node = selectHost(s, feasible, totals)
	diag.SelectedNode = res.node
	return res
}

// findFeasible filters nodes starting at NextStartNodeIndex until enough
// feasible nodes are found, recording every rejection in diag.
func (sc *Scheduler) findFeasible(s *cluster.State, state *framework.CycleState, pi *framework.PodInfo, nodes []*framework.NodeInfo, diag *Diagnosis) ([]*framework.NodeInfo, *framework.Status) {
	n := len(nodes)
	sc.rejected = sc.rejected[:0]
	if n == 0 {
		return nil, nil
	}
	want := numFeasibleNodesToFind(sc.PercentageOfNodesToScore, n)
	cache := sc.staticCache(pi.Pod)
	skip := sc.fw.filterSkips(state)
	sc.fw.fmemo.begin(sc.fw, state, pi, skip, sc.handle.snap)
	defer sc.fw.fmemo.end()
	// The static cache is indexed by snapshot position: idx itself when
	// nodes is the whole snapshot.
	whole := n == len(sc.handle.snap.nodes)
	// The list lives for this cycle only (scoring reads it, the diagnosis
	// copies names), so the previous cycle's array is reused.
	feasible := sc.fw.feasible[:0]
	if cap(feasible) < min(want, n) {
		feasible = make([]*framework.NodeInfo, 0, min(want, n))
	}
	defer func() { sc.fw.feasible = feasible }()
	start := s.Scheduler.NextStartNodeIndex
	processed := 0
	// With no pod nominated anywhere, filterWithNominated is the filters
	// alone on every node: asked once here rather than once per node
	// (docs/scheduler.md#session-24-round-2-sched2). Filters nominate no
	// pod, so the answer holds for the whole search.
	nominated := sc.anyNominated()
	for i := 0; i < n && len(feasible) < want; i++ {
		idx := (start + i) % n
		ni := nodes[idx]
		processed++
		pos := idx
		if !whole {
			pos = sc.handle.snap.position(ni)
		}
		var st *framework.Status
		if nominated {
			st = sc.filterWithNominated(state, pi, ni, skip, cache, pos)
		} else {
			st = sc.fw.runFilterPlugins(state, pi, ni, skip, cache, pos)
		}
		if st.IsSuccess() {
			feasible = append(feasible, ni)
			continue
		}
		if !st.IsRejected() {
			return nil, st
		}
		sc.rejected = append(sc.rejected, rejection{ni, st, pos})
	}
	s.Scheduler.NextStartNodeIndex = (start + processed) % n
	return feasible, nil
}

// rejectedByPosition records the cycle's rejections in diag by snapshot
// position (framework.StatusesByPosition) rather than by name, unless some
// rejected node has no position; false then, and nothing is recorded.
// Only failed cycles of a scheduler that keeps no scores use it: those
// diagnoses are read through LastDiagnosis, which turns them into the map.
func (sc *Scheduler) rejectedByPosition(diag *Diagnosis) bool {
	snap := sc.handle.snap
	for _, r := range sc.rejected {
		if r.pos < 0 || r.pos >= len(snap.names) {
			return false
		}
	}
	p := &framework.StatusesByPosition{Names: snap.names, Status: make([]*framework.Status, len(snap.names)), Count: len(sc.rejected)}
	for _, r := range sc.rejected {
		p.Status[r.pos] = r.status
	}
	diag.NodeToStatus.Statuses, diag.NodeToStatus.ByPosition = nil, p
	return true
}

// staticCache returns the verdict cache for pod's template. Verdicts are
// kept per node class when the static plugins cannot tell nodes of a class
// apart for this pod; when only NodeAffinity can (matchFields, hostname),
// the plugins before it are kept per class and it runs per node
// (docs/scheduler.md#static-verdicts-for-templates-that-name-nodes).
func (sc *Scheduler) staticCache(pod *v1.Pod) *staticVerdicts {
	if sc.fw.staticFilters == 0 {
		return nil
	}
	sig := podSignature(pod)
	c, ok := sc.static[sig]
	if !ok {
		c = newStaticVerdicts(len(sc.handle.snap.nodes))
		upTo := 0
		switch {
		case sc.perNodeStatic:
		case classBlind(pod):
			upTo = sc.fw.staticFilters
		case pod.Spec.NodeName == "":
			upTo = sc.fw.staticIndex(nodeaffinity.Name)
		}
		if upTo > 0 {
			sc.classStatic(c, pod, upTo)
		}
		sc.static[sig] = c
	}
	return c
}

// staticIndex is the position of the named plugin among the static Filter
// plugins, or 0 when it is not one of them.
func (fw *Framework) staticIndex(name string) int {
	for i := 0; i < fw.staticFilters; i++ {
		if fw.filter[i].Name() == name {
			return i
		}
	}
	return 0
}

// fail runs PostFilter and renders the FailedScheduling message.
func (sc *Scheduler) fail(state *framework.CycleState, pi *framework.PodInfo, res cycleResult, fe *helper.FitError) cycleResult {
	pr, pst := sc.fw.runPostFilterPlugins(state, pi, fe.NodeToStatus)
	res.preemption = pr
	res.diag.PostFilterStatus = pst
	fe.PostFilterMsg = pst.Message()
	res.diag.Message = fe.Error()
	code := framework.Unschedulable
	if res.diag.PreFilterStatus != nil {
		code = res.diag.PreFilterStatus.Code()
	}
	res.status = framework.NewStatus(code, res.diag.Message)
	return res
}

// selectHost picks uniformly at random among the nodes with the top total
// (reservoir sampling over the seeded source; no draw without a tie).
func selectHost(s *cluster.State, nodes []*framework.NodeInfo, totals []int64) string {
	best, count := 0, 1
	for i := 1; i < len(nodes); i++ {
		switch {
		case totals[i] > totals[best]:
			best, count = i, 1
		case totals[i] == totals[best]:
			count++
			if s.Rand.Intn(count) == 0 {
				best = i
			}
		}
	}
	return nodes[best].Name()
}
