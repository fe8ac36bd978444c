package nodevolumelimits

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: a CSINode added or updated (attach limits), a removed
// pod that held volumes, a new claim (docs/scheduler.md#the-queue).
func (pl *CSILimits) EventsToRegister(bool) []framework.ClusterEventWithHint {
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceCSINode, Action: cluster.ActionAdd | cluster.ActionUpdate}},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePod, Action: cluster.ActionDelete}, Hint: afterPodDeleted},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePVC, Action: cluster.ActionAdd}},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceVolumeAttachment, Action: cluster.ActionDelete}},
	}
}

// afterPodDeleted: only an assigned pod with volumes frees attachments.
func afterPodDeleted(_ *framework.PodInfo, oldObj, _ any) framework.QueueingHint {
	gone, _ := oldObj.(*v1.Pod)
	if gone == nil {
		return framework.Queue
	}
	if gone.Spec.NodeName == "" || len(gone.Spec.Volumes) == 0 {
		return framework.QueueSkip
	}
	return framework.Queue
}
