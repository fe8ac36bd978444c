package upstream

import (
	"testing"

	"github.com/berth-sim/berth/internal/aws"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// Karpenter's Allocatable() must be berth's KarpenterAllocatable, resource by
// resource, for every catalog type: both sides pack against the same numbers.
func TestAllocatableMatchesBerth(t *testing.T) {
	zones := aws.DefaultZones("us-west-2")
	for _, it := range aws.All() {
		got := InstanceType(it, "us-west-2", zones).Allocatable()
		want := aws.KarpenterAllocatable(it, aws.KarpenterOptions{AMIFamily: AMIFamily})
		if len(got) != len(want) {
			t.Errorf("%s: allocatable %v, berth %v", it.Name, got, want)
			continue
		}
		for name, q := range want {
			if g := got[name]; g.Cmp(q) != 0 {
				t.Errorf("%s %s: karpenter %s, berth %s", it.Name, name, g.String(), q.String())
			}
		}
	}
}

func TestOfferingsAndRequirements(t *testing.T) {
	m5, _ := aws.Lookup("m5.large")
	zones := []string{"us-west-2a", "us-west-2b"}
	it := InstanceType(m5, "us-west-2", zones)
	if len(it.Offerings) != 4 {
		t.Fatalf("want 4 offerings (2 zones x spot/on-demand), got %d", len(it.Offerings))
	}
	od, _ := m5.OnDemandPrice("us-west-2")
	for _, o := range it.Offerings {
		want := od
		if o.CapacityType() == karpv1.CapacityTypeSpot {
			want = od * SpotDiscount
		}
		if o.Price != want {
			t.Errorf("%s/%s: price %v, want %v", o.Zone(), o.CapacityType(), o.Price, want)
		}
	}
	pod := scheduling.NewRequirements(
		scheduling.NewRequirement(LabelInstanceCategory, corev1.NodeSelectorOpIn, "m"),
		scheduling.NewRequirement(LabelInstanceGeneration, corev1.NodeSelectorOpGt, "4"),
		scheduling.NewRequirement(LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5"),
		scheduling.NewRequirement(LabelInstanceSize, corev1.NodeSelectorOpIn, "large"),
		scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64"),
	)
	if err := it.Requirements.Compatible(pod); err != nil {
		t.Errorf("m5.large incompatible with its own labels: %v", err)
	}
	unpriced := &aws.InstanceType{Name: "x9.large", Arch: "amd64"}
	if n := len(InstanceType(unpriced, "us-west-2", zones).Offerings); n != 0 {
		t.Errorf("a type without a price has %d offerings", n)
	}
}
