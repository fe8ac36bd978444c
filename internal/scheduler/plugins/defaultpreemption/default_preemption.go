// Package defaultpreemption is the DefaultPreemption PostFilter, after
// upstream's plugins/defaultpreemption and framework/preemption: when no
// node passed Filter it looks for a node where evicting lower-priority pods
// lets the pod fit, picks the best such node and returns it with the
// victims. The scheduler then evicts them and nominates the node (upstream's
// executor); this package never writes to the cluster.
package defaultpreemption

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Name is the plugin's name in the profile.
const Name = "DefaultPreemption"

// Messages as upstream prints them.
const (
	MsgNotHelpful          = "Preemption is not helpful for scheduling"
	MsgNoVictims           = "No preemption victims found for incoming pod"
	MsgPolicyNever         = "not eligible due to preemptionPolicy=Never."
	MsgTerminatingOnNode   = "not eligible due to a terminating pod on the nominated node."
	MsgNoCandidate         = "no candidate node for preemption"
	preemptionMsgPrefix    = "preemption: "
	minCandidateNodesPct   = 10
	minCandidateNodesAbsol = 100
)

// Runner is what preemption needs from the scheduler beyond the Handle:
// Filter with nominated pods on a modified node, the PreFilter extensions,
// the PodDisruptionBudgets, the seeded random source and the virtual clock.
// The scheduler's handle implements it.
type Runner interface {
	RunFilterPluginsWithNominatedPods(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status
	RunPreFilterExtensionRemovePod(state *framework.CycleState, pod *framework.PodInfo, victim *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status
	RunPreFilterExtensionAddPod(state *framework.CycleState, pod *framework.PodInfo, added *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status
	// PodDisruptionBudgets lists every budget, in a fixed order.
	PodDisruptionBudgets() []*policyv1.PodDisruptionBudget
	// RandomInt returns a value in [0, n) from the cluster's seeded source.
	RandomInt(n int) int
	// Now is the virtual clock (the start time of pods that have none).
	Now() time.Time
}

// DefaultPreemption is the plugin.
type DefaultPreemption struct {
	handle framework.Handle
	runner Runner
	// lowest lets a pod that no pod could make room for skip the dry run (lowest.go).
	lowest lowestPriority
	// trials keeps the dry run's node copies for the snapshot (trials.go).
	trials trialCopies
}

// New builds the plugin; h should also implement Runner.
func New(h framework.Handle) framework.Plugin {
	r, _ := h.(Runner)
	return &DefaultPreemption{handle: h, runner: r}
}

func (*DefaultPreemption) Name() string { return Name }

// Candidate is a node where preemption would make the pod fit.
type Candidate struct {
	Node string
	// Victims are ordered most important first.
	Victims          []*v1.Pod
	NumPDBViolations int
}

// PostFilter is Evaluator.Preempt: eligibility, the dry run over nodes whose
// Filter status was exactly Unschedulable, then the choice of one candidate.
// Success carries the nominated node and the victims and no message.
func (pl *DefaultPreemption) PostFilter(state *framework.CycleState, pod *framework.PodInfo, filtered framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	if msg := pl.notEligible(pod.Pod, filtered); msg != "" {
		return nil, framework.NewStatus(framework.Unschedulable, preemptionMsgPrefix+msg)
	}
	if pl.runner == nil {
		return nil, framework.AsStatus(errors.New("preemption: scheduler handle cannot run filters"))
	}
	nodes := pl.handle.Nodes()
	potential := potentialNodes(nodes, filtered)
	if msg, ok := pl.withoutVictims(pod, nodes, len(potential)); ok {
		return &framework.PostFilterResult{}, framework.NewStatus(framework.Unschedulable, msg)
	}
	// A PreFilter rejection (Unschedulable: every node is potential) may
	// have left later plugins without state, whose extensions then fail.
	prefix := filtered.Absent == nil || filtered.Absent.Code() != framework.Unschedulable
	candidates, rejected, err := pl.findCandidates(state, pod, nodes, potential, prefix)
	if err != nil && len(candidates) == 0 {
		return nil, framework.AsStatus(errors.New(preemptionMsgPrefix + err.Error()))
	}
	if len(candidates) == 0 {
		// The message counts the rejected nodes' reasons: summed here
		// (each status object once) rather than kept by node name.
		fe := helper.FitError{NumAllNodes: len(nodes),
			NodeToStatus: framework.NodeToStatus{Absent: framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgNotHelpful)},
			Counted:      countReasons(rejected), CountedNodes: len(rejected)}
		return &framework.PostFilterResult{}, framework.NewStatus(framework.Unschedulable, preemptionMsgPrefix+fe.Error())
	}
	best := PickOneNode(candidates, pl.runner.Now())
	if best == nil {
		return nil, framework.NewStatus(framework.Unschedulable, preemptionMsgPrefix+MsgNoCandidate)
	}
	return &framework.PostFilterResult{NominatedNodeName: best.Node, Victims: best.Victims}, nil
}

// notEligible is PodEligibleToPreemptOthers: "" when the pod may preempt.
func (pl *DefaultPreemption) notEligible(pod *v1.Pod, filtered framework.NodeToStatus) string {
	if p := pod.Spec.PreemptionPolicy; p != nil && *p == v1.PreemptNever {
		return MsgPolicyNever
	}
	nominated := pod.Status.NominatedNodeName
	if nominated == "" {
		return ""
	}
	if helper.StatusOf(filtered, nominated).Code() == framework.UnschedulableAndUnresolvable {
		return ""
	}
	ni := pl.handle.Node(nominated)
	if ni == nil {
		return ""
	}
	prio := corev1helpers.PodPriority(pod)
	for _, p := range ni.Pods {
		if corev1helpers.PodPriority(p.Pod) < prio && terminatingByPreemption(p.Pod) {
			return MsgTerminatingOnNode
		}
	}
	return ""
}

// terminatingByPreemption: being deleted with DisruptionTarget=True set by
// the scheduler's preemption.
func terminatingByPreemption(p *v1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			return c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// NumCandidates is how many candidates the dry run looks for among n
// potential nodes: 10% of them, at least 100, at most n.
func NumCandidates(n int) int {
	k := n * minCandidateNodesPct / 100
	if k < minCandidateNodesAbsol {
		k = minCandidateNodesAbsol
	}
	return min(k, n)
}

// potentialNodes are the nodes whose Filter status was exactly
// Unschedulable, in node-tree order: the ones preemption may help.
func potentialNodes(nodes []*framework.NodeInfo, filtered framework.NodeToStatus) []*framework.NodeInfo {
	var potential []*framework.NodeInfo
	if p := filtered.ByPosition; p != nil && len(p.Status) == len(nodes) && filtered.Absent.Code() != framework.Unschedulable {
		// Positions are nodes' own: the explicit Unschedulable ones, in
		// order, without looking up each node's name. The names are
		// compared only for the nodes taken, in case the list differs.
		for i, st := range p.Status {
			if st.Code() != framework.Unschedulable {
				continue
			}
			if nodes[i].Name() != p.Names[i] {
				return potentialByName(nodes, filtered)
			}
			potential = append(potential, nodes[i])
		}
		return potential
	}
	return potentialByName(nodes, filtered)
}

// potentialByName is potentialNodes reading each node's status by name.
func potentialByName(nodes []*framework.NodeInfo, filtered framework.NodeToStatus) []*framework.NodeInfo {
	var potential []*framework.NodeInfo
	for _, ni := range nodes {
		if helper.StatusOf(filtered, ni.Name()).Code() == framework.Unschedulable {
			potential = append(potential, ni)
		}
	}
	return potential
}

// findCandidates is the dry run over the potential nodes among nodes. They
// are examined from a random offset, in node-tree order, until a
// non-violating candidate exists and enough candidates were found. It
// returns the candidates (non-violating first) and the status of every
// potential node examined that is not one, in the order examined. prefix allows SelectVictims' cheaper
// verdict.
func (pl *DefaultPreemption) findCandidates(state *framework.CycleState, pod *framework.PodInfo, nodes, potential []*framework.NodeInfo, prefix bool) ([]*Candidate, []nodeStatus, error) {
	if len(nodes) == 0 {
		return nil, nil, errors.New("no nodes available")
	}
	if len(potential) == 0 {
		return nil, nil, nil
	}
	var statuses []nodeStatus
	var noVictims *framework.Status
	pdbs := pl.runner.PodDisruptionBudgets()
	want := NumCandidates(len(potential))
	offset := 0
	if want < len(potential) {
		// Only then does the offset change which nodes are examined; drawing
		// it otherwise would disturb later tie-breaks for nothing.
		offset = pl.runner.RandomInt(len(potential))
	}
	prio := corev1helpers.PodPriority(pod.Pod)
	// The per-node minima (lowest.go) answer hasLowerPriorityPod without
	// walking each node's pods.
	lowerKnown := pl.lowest.sync(pl.handle, nodes)
	var nonViolating, violating []*Candidate
	var errs []error
	for i := 0; i < len(potential); i++ {
		if len(nonViolating) > 0 && len(nonViolating)+len(violating) >= want {
			break
		}
		ni := potential[(offset+i)%len(potential)]
		lower := false
		if lowerKnown {
			lower = pl.lowest.nodeBelow(ni, prio)
		} else {
			lower = hasLowerPriorityPod(ni, prio)
		}
		if !lower {
			// SelectVictimsOnNode's verdict without its copies: cloning the
			// cycle state is the dry run's main cost and is wasted here.
			if noVictims == nil {
				noVictims = framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgNoVictims)
			}
			statuses = append(statuses, nodeStatus{ni, noVictims})
			continue
		}
		victims, violations, st := pl.SelectVictims(state, pod, ni, pdbs, prefix)
		if st.IsSuccess() && len(victims) > 0 {
			c := &Candidate{Node: ni.Name(), Victims: victims, NumPDBViolations: violations}
			if violations == 0 {
				nonViolating = append(nonViolating, c)
			} else {
				violating = append(violating, c)
			}
			continue
		}
		if st.IsSuccess() {
			st = framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", ni.Name()))
		}
		if st.Code() == framework.Error {
			errs = append(errs, errors.New(st.Message()))
		}
		statuses = append(statuses, nodeStatus{ni, st})
	}
	return append(nonViolating, violating...), statuses, errors.Join(errs...)
}

// nodeStatus is a potential node the dry run found no candidate on, with
// the reason.
type nodeStatus struct {
	node   *framework.NodeInfo
	status *framework.Status
}

// countReasons sums the reasons of the nodes' statuses, as the
// FailedScheduling histogram counts them, each status object's reasons
// read once.
func countReasons(list []nodeStatus) map[string]int {
	byStatus := map[*framework.Status]int{}
	for _, ns := range list {
		byStatus[ns.status]++
	}
	counts := map[string]int{}
	for st, n := range byStatus {
		for _, r := range st.Reasons() {
			counts[r] += n
		}
	}
	return counts
}

// hasLowerPriorityPod reports whether any pod on ni has a priority below
// prio, i.e. whether SelectVictimsOnNode has anything to remove there.
func hasLowerPriorityPod(ni *framework.NodeInfo, prio int32) bool {
	for _, p := range ni.Pods {
		if corev1helpers.PodPriority(p.Pod) < prio {
			return true
		}
	}
	return false
}
