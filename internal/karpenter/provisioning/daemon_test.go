package provisioning

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestDaemonOverheadOnExistingNode: a DaemonSet without tolerations counts
// against an existing node whose only taint is PreferNoSchedule once a pool
// has been checked, because that check leaves the toleration on the shared
// DaemonSet pod (docs/karpenter-provisioning.md#daemonset-overhead). Seed 283
// of the differential test.
func TestDaemonOverheadOnExistingNode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pools  []*NodePool
		taint  corev1.TaintEffect
		podCPU string
		onNode bool
	}{
		{"PreferNoSchedule taint, pools checked: daemon counted", []*NodePool{pool("default", 0)}, corev1.TaintEffectPreferNoSchedule, "1600m", false},
		{"PreferNoSchedule taint, pools checked: smaller pod fits", []*NodePool{pool("default", 0)}, corev1.TaintEffectPreferNoSchedule, "1500m", true},
		{"PreferNoSchedule taint, no pools: daemon not counted", nil, corev1.TaintEffectPreferNoSchedule, "1600m", true},
		{"NoSchedule taint: daemon not counted", []*NodePool{pool("default", 0)}, corev1.TaintEffectNoSchedule, "1600m", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &StateNode{Name: "ip-10-0-0-1", Labels: map[string]string{corev1.LabelHostname: "ip-10-0-0-1", corev1.LabelTopologyZone: "eu-west-1a"},
				Taints: []corev1.Taint{{Key: "dedicated", Value: "a", Effect: tc.taint}},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1700m"), corev1.ResourceMemory: resource.MustParse("4Gi"),
					corev1.ResourcePods: resource.MustParse("10")}, Initialized: true}
			daemon := pendingPod("ds", "200m", "64Mi")
			p := pendingPod("p", tc.podCPU, "1Gi")
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
			in := &Input{NodePools: tc.pools, Nodes: []*StateNode{node}, DaemonSetPods: []*corev1.Pod{daemon}, Pods: []*corev1.Pod{p}}
			r := solve(t, in)
			got := len(r.ExistingNodes) == 1 && len(r.ExistingNodes[0].Pods) == 1
			if got != tc.onNode {
				t.Fatalf("pod on the existing node: %v, want %v (claims %v, errors %v)", got, tc.onNode, claimSummary(r), r.PodErrors)
			}
			if len(daemon.Spec.Tolerations) != 0 {
				t.Fatal("Solve edited the input's DaemonSet pod")
			}
		})
	}
}
