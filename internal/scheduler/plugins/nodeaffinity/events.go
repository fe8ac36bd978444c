package nodeaffinity

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: a new node, or a label change, may bring a node the
// pod's nodeSelector and required affinity match (docs/scheduler.md#the-queue).
func (pl *NodeAffinity) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	actions := cluster.ActionAdd | cluster.ActionUpdateNodeLabel
	if !queueingHints {
		actions |= cluster.ActionUpdateNodeTaint
	}
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: actions}, Hint: afterNodeChange},
	}
}

// afterNodeChange: Queue when the node matches now and did not before (or
// is new).
func afterNodeChange(pod *framework.PodInfo, oldObj, newObj any) framework.QueueingHint {
	modified, _ := newObj.(*v1.Node)
	if modified == nil {
		return framework.Queue
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod.Pod)
	if ok, err := required.Match(modified); err != nil {
		return framework.Queue
	} else if !ok {
		return framework.QueueSkip
	}
	original, _ := oldObj.(*v1.Node)
	if original == nil {
		return framework.Queue
	}
	if was, err := required.Match(original); err == nil && was {
		return framework.QueueSkip
	}
	return framework.Queue
}
