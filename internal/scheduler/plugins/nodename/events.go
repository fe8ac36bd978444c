package nodename

import (
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: only a new node can be the one spec.nodeName names; no
// hint (docs/scheduler.md#the-queue).
func (pl *NodeName) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	actions := cluster.ActionAdd
	if !queueingHints {
		actions |= cluster.ActionUpdateNodeTaint | cluster.ActionUpdateNodeLabel
	}
	return []framework.ClusterEventWithHint{{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: actions}}}
}
