package admission

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestApplyMatchLabelKeys(t *testing.T) {
	in := func(k, v string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}}
	}
	notIn := func(k, v string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpNotIn, Values: []string{v}}
	}
	podLabels := map[string]string{"app": "web", "pod-template-hash": "abc", "tenant": "t1"}
	tests := []struct {
		name string
		term v1.PodAffinityTerm
		want *metav1.LabelSelector
	}{
		{
			name: "present keys become In and NotIn, absent keys are ignored",
			term: v1.PodAffinityTerm{
				LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				MatchLabelKeys:    []string{"pod-template-hash", "missing"},
				MismatchLabelKeys: []string{"tenant"},
			},
			want: &metav1.LabelSelector{
				MatchLabels:      map[string]string{"app": "web"},
				MatchExpressions: []metav1.LabelSelectorRequirement{in("pod-template-hash", "abc"), notIn("tenant", "t1")},
			},
		},
		{
			name: "nil labelSelector stays nil",
			term: v1.PodAffinityTerm{MatchLabelKeys: []string{"app"}},
			want: nil,
		},
		{
			name: "no keys leaves the selector alone",
			term: v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
			want: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Every place a term can appear is rewritten the same way.
			mk := func() v1.PodAffinityTerm { return *tt.term.DeepCopy() }
			pod := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: v1.PodSpec{Affinity: &v1.Affinity{
					PodAffinity: &v1.PodAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution:  []v1.PodAffinityTerm{mk()},
						PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: mk()}},
					},
					PodAntiAffinity: &v1.PodAntiAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution:  []v1.PodAffinityTerm{mk()},
						PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: mk()}},
					},
				}},
			}
			ApplyMatchLabelKeys(pod)
			a := pod.Spec.Affinity
			got := []*metav1.LabelSelector{
				a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector,
				a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector,
				a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector,
				a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector,
			}
			for i, g := range got {
				if !reflect.DeepEqual(g, tt.want) {
					t.Errorf("term %d: selector = %+v, want %+v", i, g, tt.want)
				}
			}
		})
	}
	// A pod without affinity is left alone.
	ApplyMatchLabelKeys(&v1.Pod{})
}
