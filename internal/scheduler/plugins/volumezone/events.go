package volumezone

import (
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: a new storage class, claims, volumes and nodes
// (docs/scheduler.md#the-queue); berth keeps no hint here (every such event
// requeues).
func (pl *VolumeZone) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	nodeActions := cluster.ActionAdd | cluster.ActionUpdateNodeLabel
	if !queueingHints {
		nodeActions |= cluster.ActionUpdateNodeTaint
	}
	addOrUpdate := cluster.ActionAdd | cluster.ActionUpdate
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceStorageClass, Action: cluster.ActionAdd}},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: nodeActions}},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePVC, Action: addOrUpdate}},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePV, Action: addOrUpdate}},
	}
}
