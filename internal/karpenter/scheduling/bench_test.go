package scheduling

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// benchNode looks like an AWS instance type's requirements.
func benchNode() Requirements {
	zones := []string{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f"}
	return NewRequirements(
		NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large"),
		NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64"),
		NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, "linux", "windows"),
		NewRequirement(zone, corev1.NodeSelectorOpIn, zones...),
		NewRequirement(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, "us-east-1"),
		NewRequirement(CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot", "on-demand"),
		NewRequirement(LabelInstanceCategory, corev1.NodeSelectorOpIn, "m"),
		NewRequirement(LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5"),
		NewRequirement(LabelInstanceGeneration, corev1.NodeSelectorOpIn, "5"),
		NewRequirement(LabelInstanceSize, corev1.NodeSelectorOpIn, "large"),
		NewRequirement(LabelInstanceCPU, corev1.NodeSelectorOpIn, "2"),
		NewRequirement(LabelInstanceMemory, corev1.NodeSelectorOpIn, "8192"),
		NewRequirement(LabelInstanceHypervisor, corev1.NodeSelectorOpIn, "nitro"),
		NewRequirement(LabelInstanceGPUCount, corev1.NodeSelectorOpDoesNotExist),
		NewRequirement("example.com/team", corev1.NodeSelectorOpExists),
	)
}

// benchPod is a typical pod: a zone affinity, an arch selector, a custom label and a generation bound.
func benchPod() Requirements {
	return NewRequirements(
		NewRequirement(zone, corev1.NodeSelectorOpIn, "us-east-1c", "us-east-1d"),
		NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64"),
		NewRequirement(LabelInstanceGeneration, corev1.NodeSelectorOpGt, "4"),
		NewRequirement("example.com/team", corev1.NodeSelectorOpIn, "payments"),
	)
}

func BenchmarkCompatible(b *testing.B) {
	node, pod := benchNode(), benchPod()
	opt := AllowUndefinedWellKnownLabels(AWSVocabulary)
	b.ReportAllocs()
	for b.Loop() {
		if err := node.Compatible(pod, opt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompatibleFail(b *testing.B) {
	node, pod := benchNode(), benchPod()
	pod.Add(NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64"))
	opt := AllowUndefinedWellKnownLabels(AWSVocabulary)
	b.ReportAllocs()
	for b.Loop() {
		if node.IsCompatible(pod, opt) {
			b.Fatal("compatible")
		}
	}
}

func BenchmarkIntersection(b *testing.B) {
	for _, n := range []int{1, 10, 600} {
		values := make([]string, n)
		for i := range values {
			values[i] = fmt.Sprintf("type-%d", i)
		}
		big := NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, values...)
		notIn := NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpNotIn, values[:n/2+1]...)
		b.Run(fmt.Sprintf("In%d∩NotIn", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = big.Intersection(notIn)
			}
		})
		b.Run(fmt.Sprintf("HasIntersection%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = big.HasIntersection(notIn)
			}
		})
	}
}
