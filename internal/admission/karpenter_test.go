package admission

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	karpv1alpha5 "github.com/berth-sim/berth/internal/karpenter/apis/v1alpha5"
)

func TestDefaultNodePool(t *testing.T) {
	np := &karpv1.NodePool{}
	DefaultNodePool(np)
	want := karpv1.Disruption{
		ConsolidateAfter:    "0s",
		ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized,
		Budgets:             []karpv1.Budget{{Nodes: "10%"}},
	}
	if !reflect.DeepEqual(np.Spec.Disruption, want) {
		t.Errorf("disruption = %+v, want %+v", np.Spec.Disruption, want)
	}
	if got := np.Spec.Template.Spec.ExpireAfter; got != "720h" {
		t.Errorf("expireAfter = %q, want 720h", got)
	}

	// Set fields, "Never", and an explicit empty budget list are kept.
	np = &karpv1.NodePool{Spec: karpv1.NodePoolSpec{
		Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{ExpireAfter: karpv1.Never}},
		Disruption: karpv1.Disruption{ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmpty,
			ConsolidateAfter: "5m", Budgets: []karpv1.Budget{}},
	}}
	DefaultNodePool(np)
	if np.Spec.Template.Spec.ExpireAfter != karpv1.Never || np.Spec.Disruption.ConsolidateAfter != "5m" ||
		np.Spec.Disruption.ConsolidationPolicy != karpv1.ConsolidationPolicyWhenEmpty || len(np.Spec.Disruption.Budgets) != 0 {
		t.Errorf("defaults overwrote set fields: %+v", np.Spec)
	}
}

func TestDefaultNodeClaimAndEC2NodeClass(t *testing.T) {
	nc := &karpv1.NodeClaim{}
	DefaultNodeClaim(nc)
	if nc.Spec.ExpireAfter != "720h" {
		t.Errorf("NodeClaim expireAfter = %q, want 720h", nc.Spec.ExpireAfter)
	}
	class := &karpv1.EC2NodeClass{Spec: karpv1.EC2NodeClassSpec{MetadataOptions: &karpv1.MetadataOptions{HTTPTokens: ptrTo("optional")}}}
	DefaultEC2NodeClass(class)
	m := class.Spec.MetadataOptions
	if *m.HTTPEndpoint != "enabled" || *m.HTTPProtocolIPv6 != "disabled" || *m.HTTPPutResponseHopLimit != 1 || *m.HTTPTokens != "optional" {
		t.Errorf("metadataOptions = %s %s %d %s", *m.HTTPEndpoint, *m.HTTPProtocolIPv6, *m.HTTPPutResponseHopLimit, *m.HTTPTokens)
	}
}

func TestDefaultProvisioner(t *testing.T) {
	req := func(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	tests := []struct {
		name  string
		given []corev1.NodeSelectorRequirement
		want  []corev1.NodeSelectorRequirement
	}{
		{
			name: "none given",
			want: []corev1.NodeSelectorRequirement{
				req("kubernetes.io/os", "In", "linux"),
				req("kubernetes.io/arch", "In", "amd64"),
				req("karpenter.sh/capacity-type", "In", "on-demand"),
				req("karpenter.k8s.aws/instance-category", "In", "c", "m", "r"),
				req("karpenter.k8s.aws/instance-generation", "Gt", "2"),
			},
		},
		{
			name: "any operator on a key counts, beta keys as stable ones",
			given: []corev1.NodeSelectorRequirement{
				req("beta.kubernetes.io/arch", "In", "arm64"),
				req("karpenter.sh/capacity-type", "NotIn", "spot"),
				req("node.kubernetes.io/instance-type", "In", "m5.large"),
			},
			want: []corev1.NodeSelectorRequirement{
				req("beta.kubernetes.io/arch", "In", "arm64"),
				req("karpenter.sh/capacity-type", "NotIn", "spot"),
				req("node.kubernetes.io/instance-type", "In", "m5.large"),
				req("kubernetes.io/os", "In", "linux"),
			},
		},
	}
	for _, tt := range tests {
		p := &karpv1alpha5.Provisioner{Spec: karpv1alpha5.ProvisionerSpec{Requirements: tt.given}}
		DefaultProvisioner(p)
		if !reflect.DeepEqual(p.Spec.Requirements, tt.want) {
			t.Errorf("%s: requirements = %v, want %v", tt.name, p.Spec.Requirements, tt.want)
		}
	}
}

// Create defaults a NodePool; Update keeps its status and bumps the
// generation only when the spec changed.
func TestNodePoolCreateUpdate(t *testing.T) {
	s := newState(t)
	np := &karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if err := Create(s, np.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	stored := s.NodePools["default"]
	if stored.Generation != 1 || stored.Spec.Disruption.ConsolidateAfter != "0s" || stored.APIVersion != "karpenter.sh/v1" {
		t.Fatalf("stored = %+v", stored)
	}
	stored.Status.Nodes = i64(3)

	same := np.DeepCopy()
	if changed, err := Update(s, same); err != nil || changed {
		t.Fatalf("Update(same) = %v, %v; want unchanged", changed, err)
	}
	w := int32(5)
	np.Spec.Weight = &w
	if changed, err := Update(s, np); err != nil || !changed {
		t.Fatalf("Update(weight) = %v, %v", changed, err)
	}
	if got := s.NodePools["default"]; got.Generation != 2 || got.Status.Nodes == nil || *got.Status.Nodes != 3 {
		t.Errorf("after update: generation %d, status %+v", got.Generation, got.Status)
	}
}
