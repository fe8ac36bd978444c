package defaultpreemption

import (
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// lowestPriority is the lowest priority of any pod on the snapshot's nodes,
// overall and per node, advanced from the handle's pod log. When no pod
// anywhere has a lower priority than the preemptor, every potential node
// answers "No preemption victims found" and the dry run can be summed up
// without visiting them: in a cluster of equal priorities, each pod that
// fits nowhere would otherwise walk every node's pods. The per-node minimum
// answers the same question for one node without walking its pods. Pods
// leaving the snapshot only make a recorded minimum too low, which sends
// PostFilter down the full computation (whose verdict for a node without
// lower-priority pods is the same "No preemption victims found").
type lowestPriority struct {
	snapshot uint64
	consumed int
	valid    bool
	any      bool
	min      int32
	// perNode holds the minimum of each node that has pods.
	perNode map[*framework.NodeInfo]int32
}

func (l *lowestPriority) note(ni *framework.NodeInfo, prio int32) {
	if !l.any || prio < l.min {
		l.min, l.any = prio, true
	}
	if m, ok := l.perNode[ni]; !ok || prio < m {
		l.perNode[ni] = prio
	}
}

// sync brings the minima up to date with the pod log; false when it cannot
// (no pod log, or another node list), and then nothing may be read.
func (l *lowestPriority) sync(h framework.Handle, nodes []*framework.NodeInfo) bool {
	log, ok := h.(helper.PodLog)
	all := h.Nodes()
	if !ok || len(all) != len(nodes) || (len(nodes) > 0 && &all[0] != &nodes[0]) {
		l.valid = false
		return false
	}
	id, added := log.AddedPods()
	if !l.valid || id != l.snapshot || l.consumed > len(added) {
		l.snapshot, l.consumed, l.valid, l.any, l.min = id, len(added), true, false, 0
		l.perNode = make(map[*framework.NodeInfo]int32, len(nodes))
		for _, ni := range nodes {
			for _, p := range ni.Pods {
				l.note(ni, corev1helpers.PodPriority(p.Pod))
			}
		}
	} else {
		for _, a := range added[l.consumed:] {
			l.note(a.Node, corev1helpers.PodPriority(a.Pod.Pod))
		}
		l.consumed = len(added)
	}
	return true
}

// below reports whether some pod on nodes may have a priority below prio;
// it answers true when it cannot tell (no pod log, or another node list).
func (l *lowestPriority) below(h framework.Handle, nodes []*framework.NodeInfo, prio int32) bool {
	if !l.sync(h, nodes) {
		return true
	}
	return l.any && l.min < prio
}

// nodeBelow is hasLowerPriorityPod(ni, prio), answered from the per-node
// minimum after sync returned true (possibly true when the answer is false).
func (l *lowestPriority) nodeBelow(ni *framework.NodeInfo, prio int32) bool {
	m, ok := l.perNode[ni]
	return ok && m < prio
}

// withoutVictims is the dry run's outcome when no pod has a lower priority
// than pod: no candidate, and "No preemption victims found" on every
// potential node (those whose Filter status was Unschedulable). It draws the
// random offset exactly as findCandidates would, so the seeded source stays
// in step. ok is false when the full dry run is needed.
func (pl *DefaultPreemption) withoutVictims(pod *framework.PodInfo, nodes []*framework.NodeInfo, potential int) (string, bool) {
	if len(nodes) == 0 || pl.lowest.below(pl.handle, nodes, corev1helpers.PodPriority(pod.Pod)) {
		return "", false
	}
	if potential > 0 && NumCandidates(potential) < potential {
		pl.runner.RandomInt(potential)
	}
	fe := helper.FitError{NumAllNodes: len(nodes),
		NodeToStatus: framework.NodeToStatus{Absent: framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgNotHelpful)}}
	if potential > 0 {
		fe.Counted, fe.CountedNodes = map[string]int{MsgNoVictims: potential}, potential
	}
	return preemptionMsgPrefix + fe.Error(), true
}
