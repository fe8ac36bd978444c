package schedulinggates

import (
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: the pod's own gates going away. berth checks the gates
// of every pending pod at each Sync, so a gated pod never waits in the
// unschedulable pool; the registration only keeps the profile's event
// interest as upstream's (docs/scheduler.md#the-queue).
func (pl *SchedulingGates) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	if !queueingHints {
		return nil
	}
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePod, Action: cluster.ActionUpdatePodSchedulingGatesEliminated}},
	}
}
