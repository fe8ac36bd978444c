package admission

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplyMatchLabelKeys does what kube-apiserver does when a pod is created:
// for every (anti-)affinity term, each matchLabelKeys key present in the
// pod's labels becomes "key In (value)" and each mismatchLabelKeys key
// becomes "key NotIn (value)" in the term's labelSelector. Terms with a nil
// labelSelector are left alone (they match nothing anyway). The scheduler
// itself never looks at these fields. Call it once, at admission.
func ApplyMatchLabelKeys(pod *v1.Pod) {
	aff := pod.Spec.Affinity
	if aff == nil {
		return
	}
	if a := aff.PodAffinity; a != nil {
		for i := range a.RequiredDuringSchedulingIgnoredDuringExecution {
			applyToTerm(&a.RequiredDuringSchedulingIgnoredDuringExecution[i], pod.Labels)
		}
		for i := range a.PreferredDuringSchedulingIgnoredDuringExecution {
			applyToTerm(&a.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm, pod.Labels)
		}
	}
	if a := aff.PodAntiAffinity; a != nil {
		for i := range a.RequiredDuringSchedulingIgnoredDuringExecution {
			applyToTerm(&a.RequiredDuringSchedulingIgnoredDuringExecution[i], pod.Labels)
		}
		for i := range a.PreferredDuringSchedulingIgnoredDuringExecution {
			applyToTerm(&a.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm, pod.Labels)
		}
	}
}

func applyToTerm(term *v1.PodAffinityTerm, podLabels map[string]string) {
	if term.LabelSelector == nil || (len(term.MatchLabelKeys) == 0 && len(term.MismatchLabelKeys) == 0) {
		return
	}
	for _, key := range term.MatchLabelKeys {
		if value, ok := podLabels[key]; ok {
			term.LabelSelector.MatchExpressions = append(term.LabelSelector.MatchExpressions,
				metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpIn, Values: []string{value}})
		}
	}
	for _, key := range term.MismatchLabelKeys {
		if value, ok := podLabels[key]; ok {
			term.LabelSelector.MatchExpressions = append(term.LabelSelector.MatchExpressions,
				metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpNotIn, Values: []string{value}})
		}
	}
}
