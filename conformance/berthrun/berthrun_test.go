package berthrun

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/conformance/generator"
	"github.com/berth-sim/berth/conformance/scenario"
)

func node(name, cpu string, taints ...v1.Taint) *v1.Node {
	alloc := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("8Gi"),
		v1.ResourcePods: resource.MustParse("110")}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Spec:   v1.NodeSpec{Taints: taints},
		Status: v1.NodeStatus{Allocatable: alloc, Capacity: alloc}}
}

func pod(name, cpu string) *v1.Pod {
	prio := int32(0)
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.PodSpec{SchedulerName: v1.DefaultSchedulerName, Priority: &prio, Containers: []v1.Container{{Name: "c", Image: "i",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

func load(t *testing.T, sc *scenario.Scenario) *Runner {
	t.Helper()
	r := New()
	if err := r.Load(sc); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestScheduleReportsVerdictsAndScores(t *testing.T) {
	sc := &scenario.Scenario{Name: "t", KubernetesVersion: "1.36", PercentageOfNodesToScore: 100,
		Namespaces: []*v1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
		Nodes: []*v1.Node{node("a", "4"), node("b", "4"), node("c", "1"),
			node("d", "4", v1.Taint{Key: "k", Effect: v1.TaintEffectNoSchedule})}}
	r := load(t, sc)
	res, err := r.Schedule(pod("p1", "2"), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Examined != 4 {
		t.Errorf("examined %d, want 4", res.Examined)
	}
	if v := res.Nodes["c"]; v.Plugin != "NodeResourcesFit" || v.Code != "UnschedulableAndUnresolvable" || !reflect.DeepEqual(v.Reasons, []string{"Insufficient cpu"}) {
		t.Errorf("node c verdict %+v", v)
	}
	if v := res.Nodes["d"]; v.Plugin != "TaintToleration" || v.Code != "UnschedulableAndUnresolvable" {
		t.Errorf("node d verdict %+v", v)
	}
	if !reflect.DeepEqual(res.TopNodes, []string{"a", "b"}) {
		t.Errorf("top %v, want [a b]", res.TopNodes)
	}
	if res.Node != "a" && res.Node != "b" {
		t.Errorf("bound to %q", res.Node)
	}
	va := res.Nodes["a"]
	var sum int64
	for _, s := range va.Scores {
		sum += s
	}
	if va.Total == 0 || sum != va.Total {
		t.Errorf("node a total %d, per-plugin sum %d (%v)", va.Total, sum, va.Scores)
	}
	// TaintToleration has weight 3 and no intolerable PreferNoSchedule taints: 100*3.
	if va.Scores["TaintToleration"] != 300 {
		t.Errorf("weighted TaintToleration %d, want 300", va.Scores["TaintToleration"])
	}
}

func TestScheduleAlignsToTopNode(t *testing.T) {
	sc := &scenario.Scenario{Name: "t", KubernetesVersion: "1.36", PercentageOfNodesToScore: 100,
		Namespaces: []*v1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
		Nodes:      []*v1.Node{node("a", "4"), node("b", "4")}}
	for _, align := range []string{"a", "b"} {
		r := load(t, sc)
		res, err := r.Schedule(pod("p1", "1"), align)
		if err != nil {
			t.Fatal(err)
		}
		if res.Node != align || r.State().Pods["default/p1"].Spec.NodeName != align {
			t.Errorf("align %s: bound to %s", align, res.Node)
		}
		// The next pod sees the first one on align: the other node now wins.
		res2, _ := r.Schedule(pod("p2", "1"), "")
		if res2.Node == align {
			t.Errorf("align %s: second pod also went there (top %v)", align, res2.TopNodes)
		}
	}
}

func TestScheduleFailureIsRemoved(t *testing.T) {
	sc := &scenario.Scenario{Name: "t", KubernetesVersion: "1.36", PercentageOfNodesToScore: 100,
		Namespaces: []*v1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
		Nodes:      []*v1.Node{node("a", "1"), node("b", "1")}}
	r := load(t, sc)
	res, err := r.Schedule(pod("big", "2"), "")
	if err != nil {
		t.Fatal(err)
	}
	// 2 cpu exceeds each node's allocatable: U&U, so preemption cannot help.
	want := "0/2 nodes are available: 2 Insufficient cpu. "
	if res.Node != "" || !strings.HasPrefix(res.Message, want) || !strings.HasSuffix(res.Message, "2 Preemption is not helpful for scheduling.") {
		t.Errorf("got node %q message %q, want %q", res.Node, res.Message, want)
	}
	if _, ok := r.State().Pods["default/big"]; ok {
		t.Error("failed pod kept in the state")
	}
	if res2, _ := r.Schedule(pod("small", "1"), ""); res2.Node == "" {
		t.Errorf("small pod failed: %s", res2.Message)
	}
}

func TestPercentageOfNodesToScore(t *testing.T) {
	var nodes []*v1.Node
	for i := 0; i < 300; i++ {
		nodes = append(nodes, node(fmt.Sprintf("n%03d", i), "4"))
	}
	for _, tc := range []struct {
		pct  int32
		want int
	}{{100, 300}, {50, 150}, {0, 144}, {10, 100}} {
		r := load(t, &scenario.Scenario{Name: "t", KubernetesVersion: "1.36", PercentageOfNodesToScore: tc.pct, Nodes: nodes,
			Namespaces: []*v1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}}})
		res, err := r.Schedule(pod("p", "1"), "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Examined != tc.want {
			t.Errorf("percentage %d: examined %d, want %d", tc.pct, res.Examined, tc.want)
		}
	}
}

// TestGeneratedScenariosRunDeterministically runs generated scenarios twice.
func TestGeneratedScenariosRunDeterministically(t *testing.T) {
	run := func(seed uint64) string {
		sc := generator.Small(seed)
		r := load(t, sc)
		var b strings.Builder
		for _, p := range sc.Pending {
			res, err := r.Schedule(p, "")
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			fmt.Fprintf(&b, "%s %s %q %v %d\n", res.Pod, res.Node, res.Message, res.TopNodes, res.Examined)
		}
		return b.String()
	}
	scheduled, failed := 0, 0
	for seed := uint64(0); seed < 20; seed++ {
		a := run(seed)
		if b := run(seed); a != b {
			t.Errorf("seed %d: two runs differ:\n%s\n%s", seed, a, b)
		}
		failed += strings.Count(a, "0/")
		scheduled += strings.Count(a, "\n")
	}
	if failed == 0 || failed == scheduled {
		t.Errorf("%d of %d pods failed: the generator should give a mix", failed, scheduled)
	}
}

func TestRebind(t *testing.T) {
	sc := &scenario.Scenario{Name: "t", KubernetesVersion: "1.36", PercentageOfNodesToScore: 100,
		Namespaces: []*v1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
		Nodes:      []*v1.Node{node("a", "2"), node("b", "2")}}
	r := load(t, sc)
	res, _ := r.Schedule(pod("p1", "1500m"), "")
	other := map[string]string{"a": "b", "b": "a"}[res.Node]
	if err := r.Rebind("default/p1", other); err != nil {
		t.Fatal(err)
	}
	// The next big pod only fits where p1 is no longer.
	if res2, _ := r.Schedule(pod("p2", "1500m"), ""); res2.Node != res.Node {
		t.Errorf("p2 on %q, want %q", res2.Node, res.Node)
	}
	if err := r.Rebind("default/nope", "a"); err == nil {
		t.Error("rebinding a missing pod succeeded")
	}
	if err := r.Rebind("default/p1", "zz"); err == nil {
		t.Error("rebinding to a missing node succeeded")
	}
}
