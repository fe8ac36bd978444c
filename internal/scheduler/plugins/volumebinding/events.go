package volumebinding

import (
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: storage classes, claims, volumes, CSINodes and nodes
// (docs/scheduler.md#the-queue). berth keeps no hint here: every such event
// requeues a pod this plugin rejected (upstream's hints look closer at the
// claim and the class).
func (pl *VolumeBinding) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	nodeActions := cluster.ActionAdd | cluster.ActionUpdateNodeLabel
	if !queueingHints {
		nodeActions |= cluster.ActionUpdateNodeTaint
	}
	addOrUpdate := cluster.ActionAdd | cluster.ActionUpdate
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceStorageClass, Action: addOrUpdate}},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePVC, Action: addOrUpdate}},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePV, Action: addOrUpdate}},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: nodeActions}},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceCSINode, Action: addOrUpdate}},
	}
}
