package noderesources

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: an assigned pod's removal frees room; a new node, or
// more allocatable on one, may fit the pod (docs/scheduler.md#the-queue).
// Without hints the node label and taint updates are registered too, as
// upstream does for its pre-check.
func (f *Fit) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	nodeActions := cluster.ActionAdd | cluster.ActionUpdateNodeAllocatable
	if !queueingHints {
		nodeActions |= cluster.ActionUpdateNodeTaint | cluster.ActionUpdateNodeLabel
	}
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePod, Action: cluster.ActionDelete | cluster.ActionUpdatePodScaleDown}, Hint: afterPodEvent},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: nodeActions}, Hint: f.afterNodeChange},
	}
}

// afterPodEvent: the removal of a pod that was on a node (or nominated to
// one) may make room; berth resizes no pod in place, so a scale-down is
// taken as helping.
func afterPodEvent(_ *framework.PodInfo, oldObj, newObj any) framework.QueueingHint {
	if newObj == nil {
		if gone, ok := oldObj.(*v1.Pod); ok && gone.Spec.NodeName == "" && gone.Status.NominatedNodeName == "" {
			return framework.QueueSkip
		}
	}
	return framework.Queue
}

// afterNodeChange: the pod must fit the node when empty; an added node
// then helps, an updated one only if an allocatable the pod asks for (or
// the pod count) grew.
func (f *Fit) afterNodeChange(pod *framework.PodInfo, oldObj, newObj any) framework.QueueingHint {
	modified, _ := newObj.(*v1.Node)
	if modified == nil {
		return framework.Queue
	}
	after := framework.NewNodeInfo(modified)
	if len(Fits(&pod.Requests, after)) != 0 {
		return framework.QueueSkip
	}
	original, _ := oldObj.(*v1.Node)
	if original == nil {
		return framework.Queue
	}
	if grew(&pod.Requests, &framework.NewNodeInfo(original).Allocatable, &after.Allocatable) {
		return framework.Queue
	}
	return framework.QueueSkip
}

// grew reports whether the node's room for the request grew from before to after.
func grew(req, before, after *framework.Resource) bool {
	if after.AllowedPodNumber > before.AllowedPodNumber {
		return true
	}
	if req.MilliCPU == 0 && req.Memory == 0 && req.EphemeralStorage == 0 && len(req.ScalarResources) == 0 {
		return false
	}
	if req.MilliCPU > 0 && after.MilliCPU > before.MilliCPU ||
		req.Memory > 0 && after.Memory > before.Memory ||
		req.EphemeralStorage > 0 && after.EphemeralStorage > before.EphemeralStorage {
		return true
	}
	for name, q := range req.ScalarResources {
		if q != 0 && after.ScalarResources[name] > before.ScalarResources[name] {
			return true
		}
	}
	return false
}
