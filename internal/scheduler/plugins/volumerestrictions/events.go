package volumerestrictions

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: a removed pod may release a volume, a new node or
// claim may resolve the conflict (docs/scheduler.md#the-queue).
func (pl *VolumeRestrictions) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	nodeActions := cluster.ActionAdd
	if !queueingHints {
		nodeActions |= cluster.ActionUpdateNodeTaint | cluster.ActionUpdateNodeLabel
	}
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePod, Action: cluster.ActionDelete}, Hint: afterPodDeleted},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: nodeActions}},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePVC, Action: cluster.ActionAdd}},
	}
}

// afterPodDeleted: only a removed pod that used a volume can release one
// (berth's simplification of upstream's per-volume conflict check).
func afterPodDeleted(_ *framework.PodInfo, oldObj, _ any) framework.QueueingHint {
	if gone, _ := oldObj.(*v1.Pod); gone != nil && len(gone.Spec.Volumes) == 0 {
		return framework.QueueSkip
	}
	return framework.Queue
}
