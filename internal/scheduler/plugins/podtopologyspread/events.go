package podtopologyspread

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: matching pods coming, going or relabelled change the
// skew; nodes coming, going or relabelled change the domains, and a taint
// change matters under nodeTaintsPolicy Honor (docs/scheduler.md#the-queue).
func (pl *Plugin) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	podActions := cluster.ActionAdd | cluster.ActionUpdatePodLabel | cluster.ActionDelete
	if queueingHints {
		podActions |= cluster.ActionUpdatePodToleration
	}
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePod, Action: podActions}, Hint: pl.afterPodChange},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: cluster.ActionAdd | cluster.ActionDelete | cluster.ActionUpdateNodeLabel | cluster.ActionUpdateNodeTaint}, Hint: pl.afterNodeChange},
	}
}

// involved: the pod itself, or an assigned (or nominated) pod of its namespace.
func involved(other, pod *v1.Pod) bool {
	if other.UID == pod.UID {
		return true
	}
	if other.Spec.NodeName == "" && other.Status.NominatedNodeName == "" {
		return false
	}
	return other.Namespace == pod.Namespace
}

func (pl *Plugin) afterPodChange(pi *framework.PodInfo, oldObj, newObj any) framework.QueueingHint {
	pod := pi.Pod
	original, _ := oldObj.(*v1.Pod)
	modified, _ := newObj.(*v1.Pod)
	if modified != nil && !involved(modified, pod) || original != nil && !involved(original, pod) {
		return framework.QueueSkip
	}
	cs, err := pl.constraintsFor(pod, v1.DoNotSchedule)
	if err != nil {
		return framework.Queue
	}
	switch {
	case modified != nil && original != nil:
		if pod.UID == modified.UID && !equality.Semantic.DeepEqual(modified.Spec.Tolerations, original.Spec.Tolerations) && honorsTaints(cs) {
			return framework.Queue
		}
		if equality.Semantic.DeepEqual(modified.Labels, original.Labels) {
			return framework.QueueSkip
		}
		for i := range cs {
			if cs[i].Selector.Matches(labels.Set(original.Labels)) != cs[i].Selector.Matches(labels.Set(modified.Labels)) {
				return framework.Queue
			}
		}
		return framework.QueueSkip
	case modified != nil:
		return queueIf(selectedByAny(cs, modified.Labels))
	case original != nil:
		return queueIf(selectedByAny(cs, original.Labels))
	}
	return framework.QueueSkip
}

func (pl *Plugin) afterNodeChange(pi *framework.PodInfo, oldObj, newObj any) framework.QueueingHint {
	cs, err := pl.constraintsFor(pi.Pod, v1.DoNotSchedule)
	if err != nil {
		return framework.Queue
	}
	original, _ := oldObj.(*v1.Node)
	modified, _ := newObj.(*v1.Node)
	var was, is bool
	if original != nil {
		was = nodeHasAllKeys(original.Labels, cs)
	}
	if modified != nil {
		is = nodeHasAllKeys(modified.Labels, cs)
	}
	switch {
	case original != nil && modified != nil:
		if was != is {
			return framework.Queue
		}
		if is && (topologyValuesChanged(original.Labels, modified.Labels, cs) || !equality.Semantic.DeepEqual(original.Spec.Taints, modified.Spec.Taints)) {
			return framework.Queue
		}
		return framework.QueueSkip
	case modified != nil:
		return queueIf(is)
	default:
		return queueIf(was)
	}
}

// selectedByAny is upstream's podLabelsMatchSpreadConstraints: some hard
// constraint's selector matches.
func selectedByAny(cs []constraint, l map[string]string) bool {
	for i := range cs {
		if cs[i].Selector.Matches(labels.Set(l)) {
			return true
		}
	}
	return false
}

func honorsTaints(cs []constraint) bool {
	for i := range cs {
		if cs[i].NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
			return true
		}
	}
	return false
}

func topologyValuesChanged(before, after map[string]string, cs []constraint) bool {
	for i := range cs {
		if before[cs[i].TopologyKey] != after[cs[i].TopologyKey] {
			return true
		}
	}
	return false
}

func queueIf(b bool) framework.QueueingHint {
	if b {
		return framework.Queue
	}
	return framework.QueueSkip
}
