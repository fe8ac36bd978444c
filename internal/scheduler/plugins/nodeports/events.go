package nodeports

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: a removed pod may free a host port; a new node has
// all its ports free, no hint (docs/scheduler.md#the-queue).
func (pl *NodePorts) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	actions := cluster.ActionAdd
	if !queueingHints {
		actions |= cluster.ActionUpdateNodeTaint | cluster.ActionUpdateNodeLabel
	}
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePod, Action: cluster.ActionDelete}, Hint: afterPodDeleted},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: actions}},
	}
}

// afterPodDeleted: Queue when the removed pod was on (or nominated to) a
// node and held a host port the pod asks for.
func afterPodDeleted(pod *framework.PodInfo, oldObj, _ any) framework.QueueingHint {
	gone, _ := oldObj.(*v1.Pod)
	if gone == nil {
		return framework.Queue
	}
	if gone.Spec.NodeName == "" && gone.Status.NominatedNodeName == "" {
		return framework.QueueSkip
	}
	freed := framework.HostPorts(gone)
	if len(freed) == 0 {
		return framework.QueueSkip
	}
	inUse := framework.HostPortInfo{}
	for _, p := range freed {
		inUse.Add(p.HostIP, string(p.Protocol), p.HostPort)
	}
	for _, p := range framework.HostPorts(pod.Pod) {
		if inUse.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return framework.Queue
		}
	}
	return framework.QueueSkip
}
