package dynamicresources

import (
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: berth models no ResourceClaim, ResourceSlice or
// DeviceClass objects, so of upstream's registrations only the node ones
// can happen (docs/scheduler.md#the-queue).
func (pl *DynamicResources) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	actions := cluster.ActionAdd | cluster.ActionUpdateNodeLabel | cluster.ActionUpdateNodeAllocatable
	if !queueingHints {
		actions |= cluster.ActionUpdateNodeTaint
	}
	return []framework.ClusterEventWithHint{{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: actions}}}
}
