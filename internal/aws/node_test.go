package aws

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIsEC2Node(t *testing.T) {
	node := func(providerID string, labels map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	}
	it := func(name string) map[string]string { return map[string]string{corev1.LabelInstanceTypeStable: name} }
	tests := []struct {
		name string
		node *corev1.Node
		want bool
	}{
		{"aws providerID", node("aws:///eu-west-1a/i-0abc", nil), true},
		{"aws providerID, unknown type", node("aws:///eu-west-1a/i-0abc", it("z9.huge")), true},
		{"catalog type, no providerID", node("", it("t3.micro")), true},
		{"beta label", node("", map[string]string{"beta.kubernetes.io/instance-type": "m5.large"}), true},
		{"unknown type, no providerID", node("", it("e2-standard-4")), false},
		{"kind", node("kind://docker/kind/kind-worker", nil), false},
		{"gce with an EC2-looking type", node("gce://p/z/n", it("m5.large")), false},
		{"no labels at all", node("", nil), false},
		{"fargate", node("aws:///eu-west-1a/x/fargate-ip-1", map[string]string{LabelComputeType: "fargate"}), false},
		{"hybrid", node("eks-hybrid:///x", map[string]string{LabelComputeType: "hybrid", corev1.LabelInstanceTypeStable: "m5.large"}), false},
	}
	for _, tt := range tests {
		if got := IsEC2Node(tt.node); got != tt.want {
			t.Errorf("%s: IsEC2Node = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestPodIPCapacity(t *testing.T) {
	mk := func(typ, ip string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelInstanceTypeStable: typ}}}
		if ip != "" {
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
		}
		return n
	}
	// eni-max-pods minus the two host-network pods (docs/eks.md).
	for typ, want := range map[string]int{"t3.micro": 2, "t3.medium": 15, "m5.large": 27, "m5.xlarge": 56} {
		if got, ok := PodIPCapacity(mk(typ, "10.0.0.9")); !ok || got != want {
			t.Errorf("%s: %d, %v; want %d", typ, got, ok, want)
		}
	}
	if got, ok := PodIPCapacity(mk("m5.large", "2600:1f14::9")); ok {
		t.Errorf("IPv6 node limited to %d", got)
	}
	if got, ok := PodIPCapacity(mk("e2-standard-4", "")); ok {
		t.Errorf("non-EC2 node limited to %d", got)
	}
}
