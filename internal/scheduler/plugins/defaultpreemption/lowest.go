package defaultpreemption

import (
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// lowestPriority is the lowest priority of any pod on the snapshot's nodes,
// advanced from the handle's pod log. When no pod anywhere has a lower
// priority than the preemptor, every potential node answers "No preemption
// victims found" and the dry run can be summed up without visiting them:
// in a cluster of equal priorities, each pod that fits nowhere would
// otherwise walk every node's pods. Pods leaving the snapshot only make the
// recorded minimum too low, which sends PostFilter down the full dry run.
type lowestPriority struct {
	snapshot uint64
	consumed int
	valid    bool
	any      bool
	min      int32
}

func (l *lowestPriority) note(prio int32) {
	if !l.any || prio < l.min {
		l.min, l.any = prio, true
	}
}

// below reports whether some pod on nodes may have a priority below prio;
// it answers true when it cannot tell (no pod log, or another node list).
func (l *lowestPriority) below(h framework.Handle, nodes []*framework.NodeInfo, prio int32) bool {
	log, ok := h.(helper.PodLog)
	all := h.Nodes()
	if !ok || len(all) != len(nodes) || (len(nodes) > 0 && &all[0] != &nodes[0]) {
		l.valid = false
		return true
	}
	id, added := log.AddedPods()
	if !l.valid || id != l.snapshot || l.consumed > len(added) {
		l.snapshot, l.consumed, l.valid, l.any, l.min = id, len(added), true, false, 0
		for _, ni := range nodes {
			for _, p := range ni.Pods {
				l.note(corev1helpers.PodPriority(p.Pod))
			}
		}
	} else {
		for _, a := range added[l.consumed:] {
			l.note(corev1helpers.PodPriority(a.Pod.Pod))
		}
		l.consumed = len(added)
	}
	return l.any && l.min < prio
}

// withoutVictims is the dry run's outcome when no pod has a lower priority
// than pod: no candidate, and "No preemption victims found" on every node
// whose Filter status was Unschedulable. It draws the random offset exactly
// as findCandidates would, so the seeded source stays in step. ok is false
// when the full dry run is needed.
func (pl *DefaultPreemption) withoutVictims(pod *framework.PodInfo, nodes []*framework.NodeInfo, filtered framework.NodeToStatus) (string, bool) {
	if len(nodes) == 0 || pl.lowest.below(pl.handle, nodes, corev1helpers.PodPriority(pod.Pod)) {
		return "", false
	}
	potential := 0
	for _, ni := range nodes {
		if helper.StatusOf(filtered, ni.Name()).Code() == framework.Unschedulable {
			potential++
		}
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
