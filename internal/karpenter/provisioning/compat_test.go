package provisioning

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// TestCompatOKMatchesScheduling checks the error-free checks against
// scheduling's Intersects and Compatible on every pair of a set of
// requirement sets covering In, NotIn, Exists, DoesNotExist, Gt/Lt and
// undefined keys.
func TestCompatOKMatchesScheduling(t *testing.T) {
	r := scheduling.NewRequirement
	zone, arch, cpu, team := corev1.LabelTopologyZone, corev1.LabelArchStable, "karpenter.k8s.aws/instance-cpu", "team"
	sets := []scheduling.Requirements{
		scheduling.NewRequirements(),
		scheduling.NewRequirements(r(zone, corev1.NodeSelectorOpIn, "a", "b")),
		scheduling.NewRequirements(r(zone, corev1.NodeSelectorOpIn, "c")),
		scheduling.NewRequirements(r(zone, corev1.NodeSelectorOpNotIn, "a")),
		scheduling.NewRequirements(r(zone, corev1.NodeSelectorOpDoesNotExist)),
		scheduling.NewRequirements(r(zone, corev1.NodeSelectorOpExists), r(arch, corev1.NodeSelectorOpIn, "arm64")),
		scheduling.NewRequirements(r(arch, corev1.NodeSelectorOpIn, "amd64"), r(cpu, corev1.NodeSelectorOpIn, "4", "8")),
		scheduling.NewRequirements(r(cpu, corev1.NodeSelectorOpGt, "4")),
		scheduling.NewRequirements(r(cpu, corev1.NodeSelectorOpLt, "5")),
		scheduling.NewRequirements(r(team, corev1.NodeSelectorOpIn, "x")),
		scheduling.NewRequirements(r(team, corev1.NodeSelectorOpNotIn, "x")),
		scheduling.NewRequirements(r(team, corev1.NodeSelectorOpExists), r(zone, corev1.NodeSelectorOpIn, "a")),
	}
	for i, a := range sets {
		for j, b := range sets {
			if got, want := intersectsOK(a, b), a.Intersects(b) == nil; got != want {
				t.Errorf("intersectsOK(%d, %d) = %v, Intersects says %v", i, j, got, want)
			}
			for _, opt := range []scheduling.CompatibilityOption{{}, allowWellKnown} {
				if got, want := compatibleOK(a, b, opt), a.Compatible(b, opt) == nil; got != want {
					t.Errorf("compatibleOK(%d, %d) = %v, Compatible says %v", i, j, got, want)
				}
			}
		}
	}
}
