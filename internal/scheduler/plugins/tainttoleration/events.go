package tainttoleration

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// EventsToRegister: a new node or a taint change may bring a node the pod
// tolerates, and so may a toleration added to the pod itself
// (docs/scheduler.md#the-queue).
func (pl *TaintToleration) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
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

// afterNodeChange: Queue when the node had an untolerated NoSchedule or
// NoExecute taint (or did not exist) and has none now.
func afterNodeChange(pod *framework.PodInfo, oldObj, newObj any) framework.QueueingHint {
	modified, _ := newObj.(*v1.Node)
	if modified == nil {
		return framework.Queue
	}
	was := true
	if original, _ := oldObj.(*v1.Node); original != nil {
		was = untolerated(original, pod.Pod)
	}
	if was && !untolerated(modified, pod.Pod) {
		return framework.Queue
	}
	return framework.QueueSkip
}

func untolerated(n *v1.Node, pod *v1.Pod) bool {
	_, bad := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), n.Spec.Taints, pod.Spec.Tolerations, helper.DoNotScheduleTaints, false)
	return bad
}

// afterPodTolerationChange: only the pod's own update can help it.
func afterPodTolerationChange(pod *framework.PodInfo, _, newObj any) framework.QueueingHint {
	if modified, _ := newObj.(*v1.Pod); modified != nil && modified.UID == pod.Pod.UID {
		return framework.Queue
	}
	return framework.QueueSkip
}
