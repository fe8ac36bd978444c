package provisioning

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// preferences relaxes a pod that failed to schedule, one soft constraint
// per call, in Karpenter's order (docs/karpenter-provisioning.md#relaxation).
// It edits the pod it is given: the solver relaxes a copy.
type preferences struct {
	// toleratePreferNoSchedule is set when some NodePool has a
	// PreferNoSchedule taint: the last step tolerates those taints.
	toleratePreferNoSchedule bool
}

// relax applies the first step that changes the pod and reports whether
// one did.
func (p *preferences) relax(pod *corev1.Pod) bool {
	steps := []func(*corev1.Pod) bool{
		removeRequiredNodeAffinityTerm,
		removePreferredPodAffinityTerm,
		removePreferredPodAntiAffinityTerm,
		removePreferredNodeAffinityTerm,
		removeTopologySpreadScheduleAnyway,
	}
	if p.toleratePreferNoSchedule {
		steps = append(steps, toleratePreferNoScheduleTaints)
	}
	for _, step := range steps {
		if step(pod) {
			return true
		}
	}
	return false
}

// removeRequiredNodeAffinityTerm drops the first of several ORed terms, so
// the next one is tried.
func removeRequiredNodeAffinityTerm(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) > 1 {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = terms[1:]
		return true
	}
	return false
}

func removePreferredPodAffinityTerm(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil || a.PodAffinity == nil || len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return false
	}
	a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = dropHeaviest(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	return true
}

func removePreferredPodAntiAffinityTerm(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return false
	}
	a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = dropHeaviest(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	return true
}

// dropHeaviest sorts the terms by weight, heaviest first (stable), and
// drops the first, as Karpenter does: the slice is reordered in place.
func dropHeaviest(terms []corev1.WeightedPodAffinityTerm) []corev1.WeightedPodAffinityTerm {
	sort.SliceStable(terms, func(i, j int) bool { return terms[i].Weight > terms[j].Weight })
	return terms[1:]
}

// removePreferredNodeAffinityTerm drops the heaviest preferred term; the
// next heaviest then counts as required.
func removePreferredNodeAffinityTerm(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return false
	}
	terms := a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	sort.SliceStable(terms, func(i, j int) bool { return terms[i].Weight > terms[j].Weight })
	a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = terms[1:]
	return true
}

// removeTopologySpreadScheduleAnyway drops the first ScheduleAnyway
// constraint, moving the last constraint into its place.
func removeTopologySpreadScheduleAnyway(pod *corev1.Pod) bool {
	tscs := pod.Spec.TopologySpreadConstraints
	for i := range tscs {
		if tscs[i].WhenUnsatisfiable == corev1.ScheduleAnyway {
			tscs[i] = tscs[len(tscs)-1]
			pod.Spec.TopologySpreadConstraints = tscs[:len(tscs)-1]
			return true
		}
	}
	return false
}

var preferNoScheduleToleration = corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectPreferNoSchedule}

func toleratePreferNoScheduleTaints(pod *corev1.Pod) bool {
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].MatchToleration(&preferNoScheduleToleration) {
			return false
		}
	}
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, preferNoScheduleToleration)
	return true
}
