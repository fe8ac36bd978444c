package scheduler

import (
	"fmt"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestAppendNodeEqualsRebuild: image-less nodes added one by one to a live
// simulation — some landing last in the node tree (the append path), some
// not (the rebuild path) — give the node order and the Filter and Schedule
// answers of a simulation started with them.
func TestAppendNodeEqualsRebuild(t *testing.T) {
	zoned := func(name, z string) *v1.Node {
		n := plugintest.SizedNode(name, "2", "8Gi", 110)
		if z != "" {
			n = plugintest.WithLabels(n, v1.LabelTopologyZone, z, v1.LabelTopologyRegion, "r")
		}
		return n
	}
	for _, tc := range []struct {
		name     string
		existing []string // zones of the existing nodes
		added    []string // zones of the nodes added
	}{
		{"no zones", []string{"", ""}, []string{"", "", "", ""}},
		{"one zone", []string{"a"}, []string{"a", "a", "a"}},
		{"smaller zone first", []string{"a", "a", "b"}, []string{"b", "b", "b", "a", "c", "c", "c"}},
		{"new zones", []string{"a", "b"}, []string{"c", "d", "c", "a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := func() []*v1.Node {
				var nodes []*v1.Node
				for i, z := range tc.existing {
					nodes = append(nodes, zoned(fmt.Sprintf("n%d", i), z))
				}
				return nodes
			}
			var extra []HypotheticalNode
			for i, z := range tc.added {
				ds := plugintest.SizedPod(fmt.Sprintf("ds-%d", i), "100m", "")
				extra = append(extra, HypotheticalNode{Node: zoned(fmt.Sprintf("h%d", i), z), Pods: []*v1.Pod{ds}})
			}
			upfront := nil2(New().Simulate(newState("1.36", state(), plugintest.OnNode(plugintest.SizedPod("lo", "1500m", ""), "n0")), extra...))
			inc := nil2(New().Simulate(newState("1.36", state(), plugintest.OnNode(plugintest.SizedPod("lo", "1500m", ""), "n0"))))
			inc.Nodes()
			for _, h := range extra {
				if err := inc.AddNode(h); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := inc.Nodes(), upfront.Nodes(); !reflect.DeepEqual(got, want) {
				t.Fatalf("node order %v, want %v", got, want)
			}
			for k := 0; k < 8; k++ {
				p := plugintest.SizedPod(fmt.Sprintf("p%d", k), "900m", "")
				for _, n := range inc.Nodes() {
					if got, want := inc.Filter(p, n), upfront.Filter(p, n); got.Message() != want.Message() || got.IsSuccess() != want.IsSuccess() {
						t.Fatalf("pod %d on %s: incremental %v, rebuilt %v", k, n, got, want)
					}
				}
				got, want := inc.Schedule(p), upfront.Schedule(p)
				if got.SelectedNode != want.SelectedNode || got.Message != want.Message {
					t.Fatalf("pod %d: incremental %q %q; rebuilt %q %q", k, got.SelectedNode, got.Message, want.SelectedNode, want.Message)
				}
				if got.SelectedNode != "" {
					if err := inc.Assume(p, got.SelectedNode); err != nil {
						t.Fatal(err)
					}
					if err := upfront.Assume(p, want.SelectedNode); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// TestPreFilteredFollowsChanges: one PreFiltered answers as Filter does,
// node by node, and stays right across Assume and AddNode (it runs
// PreFilter again after a change): here an anti-affinity pod already placed
// turns away a second one of its kind.
func TestPreFilteredFollowsChanges(t *testing.T) {
	anti := func(name string) *v1.Pod {
		p := plugintest.SizedPod(name, "100m", "")
		p.Labels = map[string]string{"app": "solo"}
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "solo"}}}}}}
		return p
	}
	node := func(name string) *v1.Node {
		return plugintest.WithLabels(plugintest.SizedNode(name, "2", "8Gi", 110), v1.LabelHostname, name)
	}
	sim := nil2(New().Simulate(newState("1.36", []*v1.Node{node("a"), node("b")})))
	first, second := anti("first"), anti("second")
	pf := sim.PreFilter(second)
	check := func(when string) {
		t.Helper()
		for _, n := range sim.Nodes() {
			if got, want := pf.Filter(n), sim.Filter(second, n); got.IsSuccess() != want.IsSuccess() || got.Message() != want.Message() {
				t.Fatalf("%s, node %s: prefiltered %v, Filter %v", when, n, got, want)
			}
		}
	}
	check("at start")
	if !pf.Filter("a").IsSuccess() {
		t.Fatalf("node a turned the pod away before anything was placed")
	}
	if err := sim.Assume(first, "a"); err != nil {
		t.Fatal(err)
	}
	check("after Assume")
	if pf.Filter("a").IsSuccess() {
		t.Fatalf("node a took the second anti-affinity pod")
	}
	if err := sim.AddNode(HypotheticalNode{Node: node("c")}); err != nil {
		t.Fatal(err)
	}
	check("after AddNode")
	if !pf.Filter("c").IsSuccess() {
		t.Fatalf("the new node turned the pod away")
	}
}
