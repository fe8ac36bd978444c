package scheduler

import (
	"encoding/json"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func stateJSON(t *testing.T, s *cluster.State) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// simCluster has two 2-CPU nodes (one tainted), a bound low-priority pod on
// n1 and a pending pod.
func simCluster() *cluster.State {
	n1 := plugintest.SizedNode("n1", "2", "8Gi", 110)
	n2 := plugintest.WithTaints(plugintest.SizedNode("n2", "2", "8Gi", 110), taint("dedicated", "db", v1.TaintEffectNoSchedule))
	lo := plugintest.OnNode(plugintest.SizedPod("lo", "1500m", ""), "n1")
	return newState("1.36", []*v1.Node{n1, n2}, lo)
}

func templateNode(name, cpu string) HypotheticalNode {
	return HypotheticalNode{Node: plugintest.SizedNode(name, cpu, "8Gi", 110)}
}

func TestSimulationLeavesClusterAndSchedulerUntouched(t *testing.T) {
	s := simCluster()
	s.Pods["default/w"] = plugintest.SizedPod("w", "100m", "")
	sc := New()
	if _, err := sc.Sync(s); err != nil { // binds w and builds the scheduler's cache order
		t.Fatal(err)
	}
	before, order := stateJSON(t, s), sc.order.clone()
	sim, err := sc.Simulate(s, templateNode("new-1", "4"))
	if err != nil {
		t.Fatal(err)
	}
	pending := plugintest.WithPriority(plugintest.SizedPod("hi", "1", ""), 100)
	sim.Schedule(pending)
	sim.Explain(pending)
	sim.Filter(pending, "n2")
	if err := sim.Assume(plugintest.SizedPod("x", "1", ""), "new-1"); err != nil {
		t.Fatal(err)
	}
	if err := sim.AddNode(templateNode("new-2", "4")); err != nil {
		t.Fatal(err)
	}
	sim.Schedule(pending)
	if after := stateJSON(t, s); after != before {
		t.Fatalf("the simulation wrote to the cluster:\nbefore %s\nafter  %s", before, after)
	}
	if !reflect.DeepEqual(sc.order, order) {
		t.Fatal("the simulation changed the scheduler's cache order")
	}
	if _, ok := s.Nodes["new-1"]; ok {
		t.Fatal("hypothetical node leaked into the cluster")
	}
}

// TestSimulationDecidesAsTheCycle asks the seam first and then lets the real
// cycle run, on cases that exercise scoring ties, PreFilter rejection and
// preemption: both must decide the same.
func TestSimulationDecidesAsTheCycle(t *testing.T) {
	cases := []struct {
		name  string
		nodes []*v1.Node
		bound []*v1.Pod
		pod   *v1.Pod
	}{
		{"tie among equal nodes", nodes3x2CPU(), nil, plugintest.SizedPod("p", "500m", "")},
		{"fits nowhere", nodes3x2CPU(), nil, plugintest.SizedPod("p", "3", "")},
		{"preempts", []*v1.Node{plugintest.SizedNode("n1", "1", "8Gi", 110), plugintest.SizedNode("n2", "1", "8Gi", 110)},
			[]*v1.Pod{plugintest.OnNode(plugintest.SizedPod("lo", "1", ""), "n1"),
				plugintest.OnNode(plugintest.WithPriority(plugintest.SizedPod("mid", "1", ""), 10), "n2")},
			plugintest.WithPriority(plugintest.SizedPod("hi", "1", ""), 100)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newState("1.36", c.nodes, append(c.bound, c.pod)...)
			sc := New()
			sc.RecordScores = true
			sim, err := sc.Simulate(s)
			if err != nil {
				t.Fatal(err)
			}
			got := sim.Schedule(c.pod)
			if _, err := sc.Sync(s); err != nil {
				t.Fatal(err)
			}
			want := sc.LastDiagnosis(cluster.Key(c.pod.Namespace, c.pod.Name))
			if got.SelectedNode != want.SelectedNode || got.Message != want.Message || got.NominatedNode != want.NominatedNode {
				t.Fatalf("simulated %q %q nominated %q; cycle %q %q nominated %q",
					got.SelectedNode, got.Message, got.NominatedNode, want.SelectedNode, want.Message, want.NominatedNode)
			}
			if !reflect.DeepEqual(podNames(got.Victims), podNames(want.Victims)) || !reflect.DeepEqual(got.Totals, want.Totals) ||
				!reflect.DeepEqual(got.Feasible, want.Feasible) {
				t.Fatalf("simulated victims %v feasible %v totals %v; cycle %v %v %v", podNames(got.Victims), got.Feasible, got.Totals,
					podNames(want.Victims), want.Feasible, want.Totals)
			}
		})
	}
}

func podNames(pods []*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestHypotheticalNodesTakePodsInTurn(t *testing.T) {
	s := simCluster()
	sim, err := New().Simulate(s, templateNode("new-1", "2"))
	if err != nil {
		t.Fatal(err)
	}
	big := plugintest.SizedPod("big", "1500m", "")
	d := sim.Schedule(big)
	if d.SelectedNode != "new-1" || !sim.Hypothetical("new-1") {
		t.Fatalf("selected %q, want the hypothetical node new-1", d.SelectedNode)
	}
	if err := sim.Assume(big, "new-1"); err != nil {
		t.Fatal(err)
	}
	d = sim.Schedule(plugintest.SizedPod("big2", "1500m", ""))
	want := "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. " +
		"no new claims to deallocate, preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
	if d.SelectedNode != "" || d.Message != want {
		t.Fatalf("second pod: selected %q message\n%q\nwant\n%q", d.SelectedNode, d.Message, want)
	}
	if err := sim.AddNode(templateNode("new-2", "2")); err != nil {
		t.Fatal(err)
	}
	if d = sim.Schedule(plugintest.SizedPod("big2", "1500m", "")); d.SelectedNode != "new-2" {
		t.Fatalf("after adding new-2: selected %q (%s)", d.SelectedNode, d.Message)
	}
	if st := sim.Filter(plugintest.SizedPod("big3", "1500m", ""), "new-1"); st.IsSuccess() || st.Plugin() != "NodeResourcesFit" {
		t.Fatalf("Filter on the full hypothetical node: %v", st)
	}
	if err := sim.AddNode(templateNode("n1", "2")); err == nil {
		t.Fatal("a hypothetical node may not shadow an existing one")
	}
}

// TestExplainGoesOnAfterTheFirstRejection: on n2 the pod is rejected both by
// the taint and by its size; the cycle reports only the first, the
// explanation both.
func TestExplainGoesOnAfterTheFirstRejection(t *testing.T) {
	s := simCluster()
	sim, err := New().Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	pod := plugintest.SizedPod("p", "3", "")
	d := sim.Schedule(pod)
	if st := d.NodeToStatus.Statuses["n2"]; st == nil || st.Plugin() != "TaintToleration" {
		t.Fatalf("cycle's verdict on n2: %v", st)
	}
	ex := sim.Explain(pod)
	if len(ex.Nodes) != 2 {
		t.Fatalf("explained %d nodes", len(ex.Nodes))
	}
	got := map[string][]string{}
	for _, n := range ex.Nodes {
		if n.Fits() {
			t.Errorf("%s fits", n.Node)
		}
		for _, v := range n.Rejections() {
			got[n.Node] = append(got[n.Node], v.Plugin+": "+v.Status.Message())
		}
	}
	want := map[string][]string{
		"n1": {"NodeResourcesFit: Insufficient cpu"},
		"n2": {"TaintToleration: node(s) had untolerated taint(s)", "NodeResourcesFit: Insufficient cpu"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("explanation %v, want %v", got, want)
	}
	for _, v := range ex.Nodes[0].Filters {
		if v.Plugin == "NodeResourcesFit" {
			continue
		}
		if v.Status != nil && !v.Status.IsSkip() {
			t.Errorf("n1 %s: %v", v.Plugin, v.Status)
		}
	}
}

func TestExplainPreFilterRejectionCoversEveryNode(t *testing.T) {
	s := simCluster()
	pod := plugintest.SizedPod("p", "100m", "")
	pod.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
	pod.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "missing"}}}}
	sim, err := New().Simulate(s)
	if err != nil {
		t.Fatal(err)
	}
	ex := sim.Explain(pod)
	// The cycle stops at the first PreFilter rejection; the explanation
	// names every plugin that cannot accept the missing claim.
	var rejecting []string
	for _, v := range ex.PreFilter {
		if v.Status != nil && !v.Status.IsSkip() {
			rejecting = append(rejecting, v.Plugin)
			if v.Status.Message() != `persistentvolumeclaim "missing" not found` {
				t.Errorf("%s: %q", v.Plugin, v.Status.Message())
			}
		}
	}
	if want := []string{"VolumeRestrictions", "VolumeBinding", "VolumeZone"}; !reflect.DeepEqual(rejecting, want) {
		t.Fatalf("PreFilter rejections %v, want %v", rejecting, want)
	}
	for _, n := range ex.Nodes {
		var got []string
		for _, v := range n.Rejections() {
			got = append(got, v.Plugin)
		}
		// NodeVolumeLimits has no PreFilter verdict to carry; its Filter
		// looks the claim up itself and fails too.
		if want := []string{"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: rejections %v, want %v", n.Node, got, want)
		}
	}
	if d := sim.Schedule(pod); d.PreFilterStatus == nil || d.PreFilterStatus.Plugin() != "VolumeRestrictions" {
		t.Fatalf("cycle's PreFilter status %v", d.PreFilterStatus)
	}
}
