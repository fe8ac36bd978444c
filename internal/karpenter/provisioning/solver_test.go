package provisioning

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

var (
	euZones = instancetype.ZonesOf("eu-west-1a", "eu-west-1b", "eu-west-1c")
	euTypes = instancetype.List("eu-west-1", euZones, instancetype.NodeClassOptions{}, nil, nil, time.Time{})
)

func pool(name string, weight int32, reqs ...scheduling.NodeSelectorRequirementWithMinValues) *NodePool {
	return &NodePool{Name: name, Weight: weight, Requirements: reqs, NodeClassLabel: "karpenter.k8s.aws/ec2nodeclass",
		NodeClassName: "default", InstanceTypes: euTypes}
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) scheduling.NodeSelectorRequirementWithMinValues {
	return scheduling.NodeSelectorRequirementWithMinValues{NodeSelectorRequirement: corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}}
}

func pendingPod(name, cpu, memory string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Labels: map[string]string{}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}}}},
	}
}

func solve(t *testing.T, in *Input) *Results {
	t.Helper()
	r, err := Solve(in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func claimSummary(r *Results) []string {
	var out []string
	for _, c := range r.NewNodeClaims {
		var pods []string
		for _, p := range c.Pods {
			pods = append(pods, p.Name)
		}
		cheapest := c.InstanceTypes.OrderByPrice(c.Requirements)[0].Name
		zone := c.Requirements.Get(corev1.LabelTopologyZone)
		out = append(out, fmt.Sprintf("%s %s zone=%v pods=%s", c.NodePool.Name, cheapest, zone, strings.Join(pods, ",")))
	}
	return out
}

func TestOnePodOneNodeClaim(t *testing.T) {
	r := solve(t, &Input{NodePools: []*NodePool{pool("default", 0, req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64"))},
		Pods: []*corev1.Pod{pendingPod("p", "1", "1Gi")}})
	if len(r.PodErrors) != 0 || len(r.NewNodeClaims) != 1 {
		t.Fatalf("errors %v claims %v", r.PodErrors, claimSummary(r))
	}
	c := r.NewNodeClaims[0]
	if c.Requirements.Has(corev1.LabelHostname) {
		t.Error("placeholder hostname left in the requirements")
	}
	for _, it := range c.InstanceTypes {
		alloc := it.Allocatable()
		if cpu := alloc[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("1")) < 0 {
			t.Fatalf("%s (cpu %s) cannot hold the pod", it.Name, cpu.String())
		}
	}
	if got := c.Requests[corev1.ResourcePods]; got.Value() != 1 {
		t.Errorf("requests %v", c.Requests)
	}
	t.Log(claimSummary(r))
}

func TestExistingNodeFirst(t *testing.T) {
	node := &StateNode{Name: "ip-10-0-0-1", Labels: map[string]string{corev1.LabelHostname: "ip-10-0-0-1", corev1.LabelTopologyZone: "eu-west-1a"},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"),
			corev1.ResourcePods: resource.MustParse("10")}, Initialized: true}
	r := solve(t, &Input{NodePools: []*NodePool{pool("default", 0)}, Nodes: []*StateNode{node},
		Pods: []*corev1.Pod{pendingPod("a", "1", "1Gi"), pendingPod("b", "1500m", "1Gi")}})
	if len(r.ExistingNodes) != 1 || len(r.ExistingNodes[0].Pods) != 1 || r.ExistingNodes[0].Pods[0].Name != "b" {
		t.Fatalf("existing: %+v", r.ExistingNodes)
	}
	if len(r.NewNodeClaims) != 1 || r.NewNodeClaims[0].Pods[0].Name != "a" {
		t.Fatalf("claims %v", claimSummary(r))
	}
}

func TestLimitsAndWeights(t *testing.T) {
	small := pool("small", 10)
	small.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0")}
	r := solve(t, &Input{NodePools: []*NodePool{pool("big", 1), small}, Pods: []*corev1.Pod{pendingPod("p", "1", "1Gi")}})
	if len(r.NewNodeClaims) != 1 || r.NewNodeClaims[0].NodePool.Name != "big" {
		t.Fatalf("claims %v errors %v", claimSummary(r), r.PodErrors)
	}
	r = solve(t, &Input{NodePools: []*NodePool{small}, Pods: []*corev1.Pod{pendingPod("p", "1", "1Gi")}})
	if got, want := fmt.Sprint(r.PodErrors["default/p"]), "all available instance types exceed limits for nodepool (NodePool=small)"; got != want {
		t.Fatalf("error %q, want %q", got, want)
	}
}

func TestCustomLabelMustBeDefined(t *testing.T) {
	p := pendingPod("p", "1", "1Gi")
	p.Spec.NodeSelector = map[string]string{"team": "a"}
	r := solve(t, &Input{NodePools: []*NodePool{pool("default", 0)}, Pods: []*corev1.Pod{p}})
	err := fmt.Sprint(r.PodErrors["default/p"])
	if !strings.HasPrefix(err, `incompatible requirements, label "team" does not have known values`) {
		t.Fatalf("error %q", err)
	}
	withTeam := pool("teams", 0)
	withTeam.Labels = map[string]string{"team": "a"}
	r = solve(t, &Input{NodePools: []*NodePool{withTeam}, Pods: []*corev1.Pod{p}})
	if len(r.PodErrors) != 0 || len(r.NewNodeClaims) != 1 {
		t.Fatalf("errors %v", r.PodErrors)
	}
}

func spreadPod(name, key string) *corev1.Pod {
	p := pendingPod(name, "1", "1Gi")
	p.Labels["app"] = "web"
	p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	return p
}

func TestZonalSpreadPinsEachClaimToAZone(t *testing.T) {
	var pods []*corev1.Pod
	for i := 0; i < 3; i++ {
		pods = append(pods, spreadPod(fmt.Sprintf("web-%d", i), corev1.LabelTopologyZone))
	}
	r := solve(t, &Input{NodePools: []*NodePool{pool("default", 0)}, Pods: pods})
	zones := map[string]bool{}
	for _, c := range r.NewNodeClaims {
		z := c.Requirements.Get(corev1.LabelTopologyZone)
		if z.Len() != 1 {
			t.Fatalf("claim not pinned to one zone: %v", z)
		}
		zones[z.Values()[0]] = true
	}
	if len(zones) != 3 || len(r.PodErrors) != 0 {
		t.Fatalf("zones %v, claims %v, errors %v", zones, claimSummary(r), r.PodErrors)
	}
}

func TestHostnameAntiAffinityOnePodPerClaim(t *testing.T) {
	var pods []*corev1.Pod
	for i := 0; i < 4; i++ {
		p := pendingPod(fmt.Sprintf("db-%d", i), "100m", "128Mi")
		p.Labels["app"] = "db"
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}}}
		pods = append(pods, p)
	}
	r := solve(t, &Input{NodePools: []*NodePool{pool("default", 0)}, Pods: pods})
	if len(r.NewNodeClaims) != 4 || len(r.PodErrors) != 0 {
		t.Fatalf("claims %v errors %v", claimSummary(r), r.PodErrors)
	}
}

// TestZoneAffinityFollowsExistingPods is seed 001's first step: pods with
// required pod affinity on zone to an app already running in eu-west-1b get
// new capacity only in that zone.
func TestZoneAffinityFollowsExistingPods(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-1", Labels: map[string]string{corev1.LabelHostname: "ip-1", corev1.LabelTopologyZone: "eu-west-1b"}}}
	running := pendingPod("inflate-0", "1", "1Gi")
	running.Labels["app"] = "inflate"
	running.Spec.NodeName = "ip-1"
	running.Status.Phase = corev1.PodRunning
	var pods []*corev1.Pod
	for i := 1; i <= 8; i++ {
		p := pendingPod(fmt.Sprintf("inflate-%d", i), "1", "1Gi")
		p.Labels["app"] = "inflate"
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "inflate"}}}}}}
		pods = append(pods, p)
	}
	r := solve(t, &Input{NodePools: []*NodePool{pool("default", 0)}, Pods: pods,
		Cluster: &Cluster{Nodes: map[string]*corev1.Node{"ip-1": node}, Pods: append([]*corev1.Pod{running}, pods...)}})
	if len(r.PodErrors) != 0 || len(r.NewNodeClaims) == 0 {
		t.Fatalf("errors %v", r.PodErrors)
	}
	for _, c := range r.NewNodeClaims {
		if z := c.Requirements.Get(corev1.LabelTopologyZone); z.Len() != 1 || z.Values()[0] != "eu-west-1b" {
			t.Fatalf("claim zone %v", z)
		}
	}
	t.Log(claimSummary(r))
}
