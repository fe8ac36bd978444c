package interpodaffinity

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// EventsToRegister: pods coming, going or relabelled change which domains
// hold matching pods; a new or relabelled node may open a topology domain
// (docs/scheduler.md#the-queue).
func (pl *Plugin) EventsToRegister(queueingHints bool) []framework.ClusterEventWithHint {
	nodeActions := cluster.ActionAdd | cluster.ActionUpdateNodeLabel
	if !queueingHints {
		nodeActions |= cluster.ActionUpdateNodeTaint
	}
	return []framework.ClusterEventWithHint{
		{Event: cluster.ClusterEvent{Resource: cluster.ResourcePod, Action: cluster.ActionAdd | cluster.ActionUpdatePodLabel | cluster.ActionDelete}, Hint: afterPodChange},
		{Event: cluster.ClusterEvent{Resource: cluster.ResourceNode, Action: nodeActions}, Hint: afterNodeChange},
	}
}

// matchesAll reports whether pod is selected by every term (namespace
// selectors were folded into the terms' namespace sets; no namespace
// labels are consulted, as upstream's hint does). No term, no match.
func matchesAll(terms []framework.AffinityTerm, pod *v1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nil) {
			return false
		}
	}
	return true
}

// afterPodChange: an update of the pod itself always helps; unscheduled
// pods never do; an added (or relabelled-into) pod helps when it matches
// all affinity terms, a removed (or relabelled-out-of) one when it matched
// all anti-affinity terms, or when its own anti-affinity selected the pod.
func afterPodChange(pod *framework.PodInfo, oldObj, newObj any) framework.QueueingHint {
	original, _ := oldObj.(*v1.Pod)
	modified, _ := newObj.(*v1.Pod)
	if modified != nil && original != nil && modified.UID == pod.Pod.UID {
		return framework.Queue
	}
	if modified != nil && modified.Spec.NodeName == "" && modified.Status.NominatedNodeName == "" ||
		original != nil && original.Spec.NodeName == "" && original.Status.NominatedNodeName == "" {
		return framework.QueueSkip
	}
	terms, anti := pod.RequiredAffinityTerms, pod.RequiredAntiAffinityTerms
	switch {
	case modified != nil && original != nil:
		if !matchesAll(terms, original) && matchesAll(terms, modified) ||
			matchesAll(anti, original) && !matchesAll(anti, modified) {
			return framework.Queue
		}
		return framework.QueueSkip
	case modified != nil:
		if matchesAll(terms, modified) {
			return framework.Queue
		}
		return framework.QueueSkip
	case original != nil:
		if matchesAll(anti, original) {
			return framework.Queue
		}
		if matchesAll(framework.NewPodInfo(original, false).RequiredAntiAffinityTerms, pod.Pod) {
			return framework.Queue
		}
	}
	return framework.QueueSkip
}

// afterNodeChange: a node that gains an affinity term's topology key (or
// changes its value), or that loses or changes an anti-affinity term's key,
// may help; a new node helps any pod with anti-affinity.
func afterNodeChange(pod *framework.PodInfo, oldObj, newObj any) framework.QueueingHint {
	original, _ := oldObj.(*v1.Node)
	modified, _ := newObj.(*v1.Node)
	if modified == nil {
		return framework.Queue
	}
	for _, t := range pod.RequiredAffinityTerms {
		now, has := modified.Labels[t.TopologyKey]
		if original == nil {
			if has {
				return framework.Queue
			}
			continue
		}
		before, had := original.Labels[t.TopologyKey]
		if has && (!had || before != now) {
			return framework.Queue
		}
	}
	for _, t := range pod.RequiredAntiAffinityTerms {
		if original == nil {
			return framework.Queue
		}
		before, had := original.Labels[t.TopologyKey]
		now, has := modified.Labels[t.TopologyKey]
		if had && (!has || before != now) {
			return framework.Queue
		}
	}
	return framework.QueueSkip
}
