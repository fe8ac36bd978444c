package scheduler

import (
	"fmt"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// zonedTemplate is a hypothetical node in zone z with an image and a pod
// holding host port 9100 (a DaemonSet pod as templates carry them).
func zonedTemplate(name, z string) HypotheticalNode {
	n := plugintest.WithLabels(plugintest.SizedNode(name, "2", "8Gi", 110),
		v1.LabelTopologyZone, z, v1.LabelTopologyRegion, "r")
	n.Status.Images = []v1.ContainerImage{{Names: []string{"app:1"}, SizeBytes: 500 << 20}}
	ds := plugintest.SizedPod("ds-"+name, "100m", "")
	ds.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 9100, HostPort: 9100, Protocol: v1.ProtocolTCP}}
	return HypotheticalNode{Node: n, Pods: []*v1.Pod{ds}}
}

// TestAddNodeIncrementalEqualsRebuild: nodes added to a live simulation
// (the incremental path) give the same node-tree order and the same
// decisions as a simulation started with them.
func TestAddNodeIncrementalEqualsRebuild(t *testing.T) {
	base := func() *Simulation {
		nodes := []*v1.Node{
			plugintest.WithLabels(plugintest.SizedNode("a1", "2", "8Gi", 110), v1.LabelTopologyZone, "a", v1.LabelTopologyRegion, "r"),
			plugintest.WithLabels(plugintest.SizedNode("b1", "2", "8Gi", 110), v1.LabelTopologyZone, "b", v1.LabelTopologyRegion, "r"),
		}
		s := newState("1.36", nodes, plugintest.OnNode(plugintest.SizedPod("lo", "1500m", ""), "a1"))
		return nil2(New().Simulate(s))
	}
	extra := []HypotheticalNode{zonedTemplate("t-a", "a"), zonedTemplate("t-b", "b"), zonedTemplate("t-a2", "a"), zonedTemplate("t-c", "c")}

	s := newState("1.36", []*v1.Node{
		plugintest.WithLabels(plugintest.SizedNode("a1", "2", "8Gi", 110), v1.LabelTopologyZone, "a", v1.LabelTopologyRegion, "r"),
		plugintest.WithLabels(plugintest.SizedNode("b1", "2", "8Gi", 110), v1.LabelTopologyZone, "b", v1.LabelTopologyRegion, "r"),
	}, plugintest.OnNode(plugintest.SizedPod("lo", "1500m", ""), "a1"))
	upfront, err := New().Simulate(s, extra...)
	if err != nil {
		t.Fatal(err)
	}
	inc := base()
	inc.Nodes() // the snapshot exists: every AddNode below is incremental
	for _, h := range extra {
		if err := inc.AddNode(h); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := inc.Nodes(), upfront.Nodes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("node order %v, want %v", got, want)
	}
	for k := 0; k < 6; k++ {
		p := plugintest.SizedPod(fmt.Sprintf("p%d", k), "700m", "")
		p.Spec.Containers[0].Image = "app:1"
		if k%2 == 1 {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 9100, HostPort: 9100, Protocol: v1.ProtocolTCP}}
		}
		got, want := inc.Schedule(p), upfront.Schedule(p)
		if got.SelectedNode != want.SelectedNode || got.Message != want.Message || !reflect.DeepEqual(got.Totals, want.Totals) {
			t.Fatalf("pod %d: incremental %q %q %v; rebuilt %q %q %v", k, got.SelectedNode, got.Message, got.Totals,
				want.SelectedNode, want.Message, want.Totals)
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
}

func nil2(sim *Simulation, err error) *Simulation {
	if err != nil {
		panic(err)
	}
	return sim
}
