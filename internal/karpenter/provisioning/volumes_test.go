package provisioning

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

func vols(driver string, claims ...string) Volumes {
	v := Volumes{}
	for _, c := range claims {
		v.Add(driver, c)
	}
	return v
}

func TestExceedsVolumeLimits(t *testing.T) {
	const ebs = "ebs.csi.aws.com"
	for _, tc := range []struct {
		name      string
		used, pod Volumes
		limits    map[string]int
		want      string
	}{
		{"under the limit", vols(ebs, "a"), vols(ebs, "b"), map[string]int{ebs: 2}, "<nil>"},
		{"over the limit", vols(ebs, "a", "b"), vols(ebs, "c"), map[string]int{ebs: 2},
			"would exceed volume limit (provisioner=ebs.csi.aws.com, volume-count=3, volume-limit=2)"},
		{"shared claim counts once", vols(ebs, "a", "b"), vols(ebs, "b"), map[string]int{ebs: 2}, "<nil>"},
		{"other driver unlimited", vols(ebs, "a"), vols("efs.csi.aws.com", "b", "c"), map[string]int{ebs: 1}, "<nil>"},
		{"no limits", vols(ebs, "a", "b"), vols(ebs, "c"), nil, "<nil>"},
		{"node already past its limit: no pod at all", vols(ebs, "a", "b"), nil, map[string]int{ebs: 1},
			"would exceed volume limit (provisioner=ebs.csi.aws.com, volume-count=2, volume-limit=1)"},
		{"zero limit", nil, vols(ebs, "a"), map[string]int{ebs: 0},
			"would exceed volume limit (provisioner=ebs.csi.aws.com, volume-count=1, volume-limit=0)"},
	} {
		if got := fmt.Sprint(exceedsVolumeLimits(tc.used, tc.pod, tc.limits)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestVolumeLimitOnExistingNode: an existing node takes volume pods up to
// its attach limit; the next one gets a new NodeClaim, which is not checked
// (docs/karpenter-provisioning.md#volume-limits).
func TestVolumeLimitOnExistingNode(t *testing.T) {
	const ebs = "ebs.csi.aws.com"
	node := &StateNode{Name: "ip-10-0-0-1", Labels: map[string]string{corev1.LabelHostname: "ip-10-0-0-1", corev1.LabelTopologyZone: "eu-west-1a"},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
			corev1.ResourcePods: resource.MustParse("20")}, Initialized: true,
		VolumeLimits: map[string]int{ebs: 2}, Volumes: vols(ebs, "default/bound")}
	var pods []*corev1.Pod
	podVolumes := map[types.UID]Volumes{}
	for i := range 3 {
		p := pendingPod(fmt.Sprintf("v%d", i), "100m", "128Mi")
		podVolumes[p.UID] = vols(ebs, "default/data-"+p.Name)
		pods = append(pods, p)
	}
	r := solve(t, &Input{NodePools: []*NodePool{pool("default", 0)}, Nodes: []*StateNode{node}, Pods: pods, PodVolumes: podVolumes})
	if len(r.ExistingNodes) != 1 || len(r.ExistingNodes[0].Pods) != 1 || r.ExistingNodes[0].Pods[0].Name != "v0" {
		t.Fatalf("existing: %+v", r.ExistingNodes)
	}
	if len(r.NewNodeClaims) != 1 || len(r.NewNodeClaims[0].Pods) != 2 || len(r.PodErrors) != 0 {
		t.Fatalf("claims %v errors %v", claimSummary(r), r.PodErrors)
	}
}
