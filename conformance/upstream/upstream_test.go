package upstream

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/berth-sim/berth/conformance/scenario"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Builders for the small clusters of the verified messages and worked examples.

type nodeOpt func(*v1.Node)

func node(name, cpu, mem string, opts ...nodeOpt) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(cpu),
			v1.ResourceMemory: resource.MustParse(mem),
			v1.ResourcePods:   resource.MustParse("110"),
		}},
	}
	n.Status.Capacity = n.Status.Allocatable.DeepCopy()
	for _, o := range opts {
		o(n)
	}
	return n
}

func label(k, v string) nodeOpt { return func(n *v1.Node) { n.Labels[k] = v } }

func taint(k, v string, effect v1.TaintEffect) nodeOpt {
	return func(n *v1.Node) { n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: k, Value: v, Effect: effect}) }
}

func cordoned(n *v1.Node) { n.Spec.Unschedulable = true }

type podOpt func(*v1.Pod)

func pod(name, cpu, mem string, opts ...podOpt) *v1.Pod {
	req := v1.ResourceList{}
	if cpu != "" {
		req[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		req[v1.ResourceMemory] = resource.MustParse(mem)
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{}},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: req},
		}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func on(nodeName string) podOpt { return func(p *v1.Pod) { p.Spec.NodeName = nodeName } }

func podLabel(k, v string) podOpt { return func(p *v1.Pod) { p.Labels[k] = v } }

func nodeSelector(k, v string) podOpt {
	return func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{k: v} }
}

func priority(value int32, policy v1.PreemptionPolicy) podOpt {
	return func(p *v1.Pod) { p.Spec.Priority, p.Spec.PreemptionPolicy = &value, &policy }
}

func withAffinity(a *v1.Affinity) podOpt { return func(p *v1.Pod) { p.Spec.Affinity = a } }

func antiAffinity(k, v, topologyKey string) *v1.Affinity {
	return &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{k: v}},
			TopologyKey:   topologyKey,
		}},
	}}
}

func zoneSpread(k, v string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{k: v}},
		}}
	}
}

func run(t *testing.T, s *scenario.Scenario, align string) (*Runner, []scenario.PodResult) {
	t.Helper()
	r := New()
	t.Cleanup(r.Close)
	if err := r.Load(s); err != nil {
		t.Fatal(err)
	}
	var results []scenario.PodResult
	for _, p := range s.Pending {
		res, err := r.Schedule(p, align)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	return r, results
}

// TestVerifiedMessages reproduces the v1.36.3 messages verified on the real
// scheduler, the per-node verdicts behind them, and checks that
// the FailedScheduling event carries the same text.
func TestVerifiedMessages(t *testing.T) {
	type nodeWant struct{ plugin, reason, code string }
	const uu, u = "UnschedulableAndUnresolvable", "Unschedulable"
	tests := []struct {
		name     string
		nodes    []*v1.Node
		existing []*v1.Pod
		pod      *v1.Pod
		message  string
		examined int
		verdicts map[string]nodeWant
	}{
		{
			name:     "S01 insufficient cpu everywhere",
			nodes:    []*v1.Node{node("n1", "2", "4Gi"), node("n2", "2", "4Gi"), node("n3", "2", "4Gi")},
			pod:      pod("big", "4", ""),
			message:  "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
			examined: 3,
			verdicts: map[string]nodeWant{
				"n1": {"NodeResourcesFit", "Insufficient cpu", uu},
				"n2": {"NodeResourcesFit", "Insufficient cpu", uu},
				"n3": {"NodeResourcesFit", "Insufficient cpu", uu},
			},
		},
		{
			name: "S04 taint, cordon, selector, memory",
			nodes: []*v1.Node{
				node("n1", "4", "8Gi", label("disk", "ssd"), taint("dedicated", "gpu", v1.TaintEffectNoSchedule)),
				node("n2", "4", "8Gi", label("disk", "ssd"), cordoned),
				node("n3", "4", "8Gi", label("disk", "hdd")),
				node("n4", "4", "1Gi", label("disk", "ssd")),
			},
			pod:      pod("web", "100m", "2Gi", nodeSelector("disk", "ssd")),
			message:  "0/4 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
			examined: 4,
			verdicts: map[string]nodeWant{
				"n1": {"TaintToleration", "node(s) had untolerated taint(s)", uu},
				"n2": {"NodeUnschedulable", "node(s) were unschedulable", uu},
				"n3": {"NodeAffinity", "node(s) didn't match Pod's node affinity/selector", uu},
				"n4": {"NodeResourcesFit", "Insufficient memory", uu},
			},
		},
		{
			name: "S09 anti-affinity and NoExecute taint",
			nodes: []*v1.Node{
				node("n1", "4", "8Gi"), node("n2", "4", "8Gi"),
				node("n3", "4", "8Gi", taint("k", "v", v1.TaintEffectNoExecute)),
			},
			existing: []*v1.Pod{
				pod("web-1", "100m", "", on("n1"), podLabel("app", "web")),
				pod("web-2", "100m", "", on("n2"), podLabel("app", "web")),
			},
			pod:      pod("web-3", "100m", "", podLabel("app", "web"), withAffinity(antiAffinity("app", "web", v1.LabelHostname))),
			message:  "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
			examined: 3,
			verdicts: map[string]nodeWant{
				"n1": {"InterPodAffinity", "node(s) didn't match pod anti-affinity rules", u},
				"n2": {"InterPodAffinity", "node(s) didn't match pod anti-affinity rules", u},
				"n3": {"TaintToleration", "node(s) had untolerated taint(s)", uu},
			},
		},
		{
			name: "S13 zone spread with a tainted zone and an unlabelled node",
			nodes: []*v1.Node{
				node("a1", "4", "8Gi", label(v1.LabelTopologyZone, "z1")),
				node("a2", "4", "8Gi", label(v1.LabelTopologyZone, "z1")),
				node("b1", "4", "8Gi", label(v1.LabelTopologyZone, "z2"), taint("k", "v", v1.TaintEffectNoSchedule)),
				node("nozone", "4", "8Gi"),
			},
			existing: []*v1.Pod{
				pod("s-1", "100m", "", on("a1"), podLabel("app", "s")),
				pod("s-2", "100m", "", on("a2"), podLabel("app", "s")),
			},
			pod:      pod("s-3", "100m", "", podLabel("app", "s"), zoneSpread("app", "s")),
			message:  "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label), 1 node(s) had untolerated taint(s), 2 node(s) didn't match pod topology spread constraints. no new claims to deallocate, preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
			examined: 4,
			verdicts: map[string]nodeWant{
				"a1":     {"PodTopologySpread", "node(s) didn't match pod topology spread constraints", u},
				"a2":     {"PodTopologySpread", "node(s) didn't match pod topology spread constraints", u},
				"b1":     {"TaintToleration", "node(s) had untolerated taint(s)", uu},
				"nozone": {"PodTopologySpread", "node(s) didn't match pod topology spread constraints (missing required label)", uu},
			},
		},
		{
			name:     "S16 no nodes",
			pod:      pod("lonely", "100m", ""),
			message:  "no nodes available to schedule pods",
			verdicts: map[string]nodeWant{},
		},
		{
			name:     "S17 preemptionPolicy Never",
			nodes:    []*v1.Node{node("n1", "1", "4Gi")},
			existing: []*v1.Pod{pod("filler", "1", "", on("n1"))},
			pod:      pod("hi", "500m", "", priority(100, v1.PreemptNever)),
			message:  "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.",
			examined: 1,
			verdicts: map[string]nodeWant{"n1": {"NodeResourcesFit", "Insufficient cpu", u}},
		},
		{
			name:  "S18 matchFields to a missing node (PreFilterResult)",
			nodes: []*v1.Node{node("n1", "4", "8Gi"), node("n2", "4", "8Gi")},
			pod: pod("pinned", "100m", "", withAffinity(&v1.Affinity{NodeAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n9"}}},
				}}},
			}})),
			message:  "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
			examined: 0,
			verdicts: map[string]nodeWant{
				"n1": {"NodeAffinity", "node(s) didn't satisfy plugin(s) [NodeAffinity]", uu},
				"n2": {"NodeAffinity", "node(s) didn't satisfy plugin(s) [NodeAffinity]", uu},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scenario.Scenario{Name: tt.name, Nodes: tt.nodes, Existing: tt.existing, Pending: []*v1.Pod{tt.pod}}
			r, results := run(t, s, "")
			got := results[0]
			if got.Node != "" || got.Message != tt.message {
				t.Errorf("got node %q message\n%q\nwant unschedulable with\n%q", got.Node, got.Message, tt.message)
			}
			if got.Examined != tt.examined {
				t.Errorf("examined %d nodes, want %d", got.Examined, tt.examined)
			}
			if got.TopNodes != nil {
				t.Errorf("TopNodes = %v, want nil (no scoring)", got.TopNodes)
			}
			if len(got.Nodes) != len(tt.verdicts) {
				t.Errorf("got verdicts for %d nodes, want %d: %+v", len(got.Nodes), len(tt.verdicts), got.Nodes)
			}
			for name, want := range tt.verdicts {
				v := got.Nodes[name]
				if v.Plugin != want.plugin || !reflect.DeepEqual(v.Reasons, []string{want.reason}) || v.Code != want.code {
					t.Errorf("node %s: got %s %q %s, want %s %q %s", name, v.Plugin, v.Reasons, v.Code, want.plugin, want.reason, want.code)
				}
			}
			ev, ok := r.events.last("default/"+tt.pod.Name, "FailedScheduling")
			if !ok || ev.Note != tt.message || ev.Type != v1.EventTypeWarning || ev.Action != "Scheduling" {
				t.Errorf("FailedScheduling event = %+v (found %v), want note %q", ev, ok, tt.message)
			}
		})
	}
}

// exampleA is worked example A (scores read from upstream's verbose log).
func exampleA() *scenario.Scenario {
	preferSSD := &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
			Weight: 10,
			Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{
				Key: "disk", Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"},
			}}},
		}},
	}}
	return &scenario.Scenario{
		Name: "example A",
		Nodes: []*v1.Node{
			node("a", "4", "8Gi", label(v1.LabelTopologyZone, "z1")),
			node("b", "4", "8Gi", taint("soft", "x", v1.TaintEffectPreferNoSchedule)),
			node("c", "8", "8Gi", label(v1.LabelTopologyZone, "z2"), label("disk", "ssd")),
		},
		Existing: []*v1.Pod{pod("on-a", "1", "2Gi", on("a")), pod("on-c", "3", "1Gi", on("c"))},
		Pending:  []*v1.Pod{pod("p", "500m", "1Gi", withAffinity(preferSSD))},
	}
}

func TestScoredPlacementExampleA(t *testing.T) {
	_, results := run(t, exampleA(), "")
	got := results[0]
	if got.Node != "c" || got.Message != "" {
		t.Fatalf("got node %q message %q, want c", got.Node, got.Message)
	}
	if !reflect.DeepEqual(got.TopNodes, []string{"c"}) || got.Examined != 3 {
		t.Errorf("TopNodes %v examined %d, want [c] and 3", got.TopNodes, got.Examined)
	}
	want := map[string]scenario.NodeVerdict{
		"a": {Total: 437, Scores: map[string]int64{"TaintToleration": 300, "NodeAffinity": 0, "NodeResourcesFit": 62, "DynamicResources": 0, "NodeResourcesBalancedAllocation": 75, "ImageLocality": 0}},
		"b": {Total: 162, Scores: map[string]int64{"TaintToleration": 0, "NodeAffinity": 0, "NodeResourcesFit": 87, "DynamicResources": 0, "NodeResourcesBalancedAllocation": 75, "ImageLocality": 0}},
		"c": {Total: 641, Scores: map[string]int64{"TaintToleration": 300, "NodeAffinity": 200, "NodeResourcesFit": 65, "DynamicResources": 0, "NodeResourcesBalancedAllocation": 76, "ImageLocality": 0}},
	}
	if !reflect.DeepEqual(got.Nodes, want) {
		t.Errorf("verdicts\n got %+v\nwant %+v", got.Nodes, want)
	}
}

// TestAlignment checks that a tie is broken towards align, that align outside
// the top set is ignored, and that consecutive pods see earlier bindings.
func TestAlignment(t *testing.T) {
	twins := func(pending ...*v1.Pod) *scenario.Scenario {
		return &scenario.Scenario{Nodes: []*v1.Node{node("n1", "4", "8Gi"), node("n2", "4", "8Gi")}, Pending: pending}
	}
	for _, align := range []string{"n1", "n2"} {
		t.Run("tie to "+align, func(t *testing.T) {
			_, results := run(t, twins(pod("p", "1", "1Gi")), align)
			if got := results[0]; got.Node != align || !reflect.DeepEqual(got.TopNodes, []string{"n1", "n2"}) {
				t.Errorf("bound to %q with top %v, want %q among [n1 n2]", got.Node, got.TopNodes, align)
			}
		})
	}
	t.Run("sequence sees earlier pods", func(t *testing.T) {
		r := New()
		t.Cleanup(r.Close)
		if err := r.Load(twins()); err != nil {
			t.Fatal(err)
		}
		first, err := r.Schedule(pod("p1", "1", "1Gi"), "n1")
		if err != nil || first.Node != "n1" {
			t.Fatalf("first pod: %+v, %v", first, err)
		}
		// n1 now holds p1, so n2 scores strictly higher: align n1 is not in the top set.
		second, err := r.Schedule(pod("p2", "1", "1Gi"), "n1")
		if err != nil || second.Node != "n2" || !reflect.DeepEqual(second.TopNodes, []string{"n2"}) {
			t.Fatalf("second pod: %+v, %v", second, err)
		}
		// An unschedulable pod in between leaves no trace for the next one.
		third, err := r.Schedule(pod("huge", "8", ""), "")
		if err != nil || third.Node != "" || third.Message == "" {
			t.Fatalf("third pod: %+v, %v", third, err)
		}
		fourth, err := r.Schedule(pod("p4", "1", "1Gi"), "n2")
		if err != nil || fourth.Node != "n2" || !reflect.DeepEqual(fourth.TopNodes, []string{"n1", "n2"}) {
			t.Fatalf("fourth pod: %+v, %v", fourth, err)
		}
		if ev, ok := r.events.last("default/p4", "Scheduled"); !ok || ev.Note != "Successfully assigned default/p4 to n2" {
			t.Errorf("Scheduled event = %+v (found %v)", ev, ok)
		}
	})
}

// TestPreemptionRetiresPreemptor follows S03: the attempt fails with the
// Filter histogram only (preemption succeeded), the lower-priority victim on
// n1 is deleted before Schedule returns, and the next pod sees the room.
func TestPreemptionRetiresPreemptor(t *testing.T) {
	s := &scenario.Scenario{
		Nodes: []*v1.Node{node("n1", "1", "4Gi"), node("n2", "1", "4Gi")},
		Existing: []*v1.Pod{
			pod("low", "1", "", on("n1"), priority(0, v1.PreemptLowerPriority)),
			pod("mid", "1", "", on("n2"), priority(10, v1.PreemptLowerPriority)),
		},
		Pending: []*v1.Pod{
			pod("hi", "1", "", priority(100, v1.PreemptLowerPriority)),
			pod("next", "1", ""),
		},
	}
	r, results := run(t, s, "")
	if got, want := results[0].Message, "0/2 nodes are available: 2 Insufficient cpu."; got != want || results[0].Node != "" {
		t.Errorf("preemptor: node %q message %q, want unschedulable with %q", results[0].Node, got, want)
	}
	ev, ok := r.events.last("default/low", "Preempted")
	if want := "Preempted by pod uid-default-hi on node n1"; !ok || ev.Note != want {
		t.Errorf("victim event = %+v (found %v), want note %q", ev, ok, want)
	}
	if _, ok := r.events.last("default/mid", "Preempted"); ok {
		t.Errorf("the priority-10 pod on n2 was preempted too")
	}
	if results[1].Node != "n1" {
		t.Errorf("next pod went to %q (%s), want n1 freed by preemption", results[1].Node, results[1].Message)
	}
}

// BenchmarkSchedule measures upstream inside the harness (pods/s): 500 nodes,
// all scored, pods of one shape, without per-node verdicts.
func BenchmarkSchedule(b *testing.B) {
	var nodes []*v1.Node
	for i := range 500 {
		nodes = append(nodes, node(fmt.Sprintf("n%03d", i), "16", "64Gi", label(v1.LabelTopologyZone, fmt.Sprintf("z%d", i%3))))
	}
	r := New()
	r.SkipNodeVerdicts = true
	defer r.Close()
	if err := r.Load(&scenario.Scenario{Nodes: nodes, PercentageOfNodesToScore: 100}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		res, err := r.Schedule(pod(fmt.Sprintf("p%d", i), "100m", "128Mi"), "")
		if err != nil || res.Node == "" || res.Examined != len(nodes) || res.Nodes != nil || len(res.TopNodes) == 0 {
			b.Fatalf("pod %d: %+v, %v", i, res, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}
