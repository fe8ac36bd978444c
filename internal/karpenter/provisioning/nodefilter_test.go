package provisioning

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// TestNodeFilterStrictOnUndefinedLabels: a spread's node filter that names a
// zone does not match requirements without a zone, whatever compatibility
// options the caller passes (docs/karpenter-provisioning.md#topology).
// Differential seeds 133 and 289.
func TestNodeFilterStrictOnUndefinedLabels(t *testing.T) {
	zoned := &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-west-1b"}}}}}}}}}}
	f := makeNodeFilter(zoned, corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor)
	for _, tc := range []struct {
		name string
		reqs scheduling.Requirements
		want bool
	}{
		{"no zone requirement", scheduling.NewRequirements(scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64")), false},
		{"same zone", scheduling.NewRequirements(scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "eu-west-1b")), true},
		{"zone among several", scheduling.NewRequirements(scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "eu-west-1a", "eu-west-1b")), true},
		{"other zone", scheduling.NewRequirements(scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "eu-west-1c")), false},
	} {
		if got := f.matches(nil, tc.reqs, allowWellKnown); got != tc.want {
			t.Errorf("%s: matches = %v, want %v", tc.name, got, tc.want)
		}
	}
}
