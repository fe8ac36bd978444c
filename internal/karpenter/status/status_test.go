package status

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

func condition(conds []metav1.Condition, typ string) metav1.ConditionStatus {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func TestNodePoolAndNodeClassStatus(t *testing.T) {
	s := cluster.New("1.34", 1)
	s.Info = cluster.Info{Name: "demo", Region: "eu-west-1", KubernetesVersion: "1.34", Zones: []string{"eu-west-1a", "eu-west-1b"}}
	ref := &karpv1.NodeClassReference{Group: karpv1.AWSGroup, Kind: "EC2NodeClass", Name: "default"}
	s.NodePools = map[string]*karpv1.NodePool{"default": {ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 1},
		Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{NodeClassRef: ref}}}}}
	c := New()
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	if got := condition(s.NodePools["default"].Status.Conditions, "Ready"); got != metav1.ConditionFalse {
		t.Fatalf("NodePool without its EC2NodeClass: Ready=%s", got)
	}
	s.EC2NodeClasses = map[string]*karpv1.EC2NodeClass{"default": {ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: karpv1.EC2NodeClassSpec{AMISelectorTerms: []karpv1.AMISelectorTerm{{Alias: "al2023@latest"}}}}}
	cpu := resource.MustParse("4")
	s.NodeClaims = map[string]*karpv1.NodeClaim{"default-abcde": {ObjectMeta: metav1.ObjectMeta{Name: "default-abcde",
		Labels: map[string]string{scheduling.NodePoolLabelKey: "default"}}, Status: karpv1.NodeClaimStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: cpu}}}}
	if _, err := c.Sync(s); err != nil {
		t.Fatal(err)
	}
	np := s.NodePools["default"]
	if got := condition(np.Status.Conditions, "Ready"); got != metav1.ConditionTrue {
		t.Fatalf("Ready=%s", got)
	}
	if np.Status.Nodes == nil || *np.Status.Nodes != 1 || np.Status.Resources.Cpu().String() != "4" || np.Status.Resources.Name("nodes", resource.DecimalSI).Value() != 1 {
		t.Fatalf("status %+v", np.Status)
	}
	nc := s.EC2NodeClasses["default"]
	if len(nc.Status.Subnets) != 2 || nc.Status.Subnets[1].Zone != "eu-west-1b" || nc.Status.Subnets[1].ZoneID != "euw1-az2" ||
		condition(nc.Status.Conditions, "Ready") != metav1.ConditionTrue || len(nc.Status.AMIs) != 2 {
		t.Fatalf("node class status %+v", nc.Status)
	}
	rv, ncRV := np.ResourceVersion, nc.ResourceVersion
	if changed, _ := c.Sync(s); changed || np.ResourceVersion != rv || nc.ResourceVersion != ncRV {
		t.Fatal("an unchanged status was written again")
	}
}
