package instancetype

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// BenchmarkList builds all 1,325 types for a NodeClass in three zones.
func BenchmarkList(b *testing.B) {
	zones := ZonesOf("us-east-1a", "us-east-1b", "us-east-1c")
	uo := NewUnavailableOfferings()
	uo.MarkUnavailable("m5.large", "us-east-1a", "spot", t0)
	b.ReportAllocs()
	for b.Loop() {
		its := List("us-east-1", zones, NodeClassOptions{}, nil, uo, t0)
		if len(its) != 1325 {
			b.Fatal(len(its))
		}
	}
}

// BenchmarkOrderByPrice orders the full list for a typical NodeClaim
// requirement set (amd64, spot or on-demand, two zones).
func BenchmarkOrderByPrice(b *testing.B) {
	its := List("us-east-1", ZonesOf("us-east-1a", "us-east-1b", "us-east-1c"), NodeClassOptions{}, nil, nil, t0)
	r := scheduling.NewRequirements(
		scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64"),
		scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot", "on-demand"),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "us-east-1a", "us-east-1b"),
	)
	b.ReportAllocs()
	for b.Loop() {
		its.OrderByPrice(r)
	}
}

// BenchmarkAllocatable is the cached per-fit-check cost.
func BenchmarkAllocatable(b *testing.B) {
	its := List("us-east-1", ZonesOf("us-east-1a"), NodeClassOptions{}, nil, nil, t0)
	b.ReportAllocs()
	for b.Loop() {
		for _, it := range its {
			_ = it.Allocatable()
		}
	}
}
