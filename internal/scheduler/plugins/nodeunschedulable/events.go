package nodeunschedulable

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: a new schedulable node, an uncordon (an UpdateNodeTaint
// event), or a toleration of the unschedulable taint added to the pod
// itself (docs/scheduler.md#the-queue).
func (pl *NodeUnschedulable) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	if !queueingHints {
		return []framework.ClusterEventWithHint{
			{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: cluster.ActionAdd | cluster.ActionUpdateNodeTaint | cluster.ActionUpdateNodeLabel}, Hint: afterNodeChange},
		}
	}
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: cluster.ActionAdd | cluster.ActionUpdateNodeTaint}, Hint: afterNodeChange},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePod, Action: cluster.ActionUpdatePodToleration}, Hint: afterPodTolerationChange},
	}
}

// afterNodeChange: Queue for a new node that is not cordoned, or a node
// that was cordoned and is not any more.
func afterNodeChange(_ *framework.PodInfo, oldObj, newObj any) framework.QueueingHint {
	modified, _ := newObj.(*v1.Node)
	if modified == nil {
		return framework.Queue
	}
	original, _ := oldObj.(*v1.Node)
	if !modified.Spec.Unschedulable && (original == nil || original.Spec.Unschedulable) {
		return framework.Queue
	}
	return framework.QueueSkip
}

// afterPodTolerationChange: the pod's own update helps if it now
// tolerates the unschedulable taint.
func afterPodTolerationChange(pod *framework.PodInfo, _, newObj any) framework.QueueingHint {
	modified, _ := newObj.(*v1.Pod)
	if modified == nil || modified.UID != pod.Pod.UID {
		return framework.QueueSkip
	}
	if corev1helpers.TolerationsTolerateTaint(logr.Discard(), modified.Spec.Tolerations, &unschedulableTaint, false) {
		return framework.Queue
	}
	return framework.QueueSkip
}
