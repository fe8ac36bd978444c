package scheduler

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
	"github.com/berth-sim/berth/internal/sim"
)

// TestIncrementalPreemptionBookkeeping: after every preemption the
// refreshed snapshot and the nominated index equal what a fresh build from
// the state and the cache's pod order gives (same pods in the same order
// per node, same sums).
func TestIncrementalPreemptionBookkeeping(t *testing.T) {
	var nodes []*v1.Node
	for i := 0; i < 12; i++ {
		n := plugintest.SizedNode(fmt.Sprintf("n%02d", i), "4", "32Gi", 110)
		n.Labels[v1.LabelTopologyZone] = []string{"a", "b", "c"}[i%3]
		nodes = append(nodes, n)
	}
	var pods []*v1.Pod
	for i, n := range nodes {
		for j := 0; j < 2; j++ {
			// Names sort against node order, so key order differs from binding order.
			p := plugintest.WithPriority(plugintest.SizedPod(fmt.Sprintf("filler-%02d-%d", 11-i, j), "1850m", "1Gi"), 0)
			p.UID = types.UID(p.Name)
			p.Spec.NodeName = n.Name
			p.Status.Phase = v1.PodRunning
			pods = append(pods, p)
		}
	}
	for i := 0; i < 40; i++ {
		var p *v1.Pod
		if i%4 == 0 {
			p = plugintest.WithPriority(plugintest.SizedPod(fmt.Sprintf("urgent-%02d", 39-i), "1", "1Gi"), 1000)
		} else {
			p = plugintest.WithPriority(plugintest.SizedPod(fmt.Sprintf("plain-%02d", 39-i), "100m", "100Mi"), 0)
		}
		p.UID = types.UID(p.Name)
		pods = append(pods, p)
	}
	s := newState("1.36", nodes, pods...)
	// Earlier-created pods have later names: pods join nodes out of key order.
	for i, p := range pods[len(nodes)*2:] {
		p.CreationTimestamp = metav1.NewTime(s.Now.Add(-time.Duration(100-i) * time.Second))
	}
	checks := 0
	sc := New()
	sc.afterPreempt = func(s *cluster.State) {
		checks++
		got := sc.handle.snap
		gotNominated := map[string][]string{}
		for n, list := range sc.nominated.byNode {
			for _, np := range list {
				gotNominated[n.Name] = append(gotNominated[n.Name], np.key)
			}
		}
		fresh := New()
		if err := fresh.ensureFramework(s); err != nil {
			t.Fatal(err)
		}
		// The cache's pod order is history, not state: start from the live one.
		fresh.order = sc.order.clone()
		fresh.buildSnapshot(s)
		want := fresh.handle.snap
		if len(got.nodes) != len(want.nodes) {
			t.Fatalf("%d nodes, want %d", len(got.nodes), len(want.nodes))
		}
		for i := range want.nodes {
			g, w := got.nodes[i], want.nodes[i]
			if g.Name() != w.Name() || got.byName[g.Name()] != g {
				t.Fatalf("node %d is %q, want %q", i, g.Name(), w.Name())
			}
			if podKeys(g) != podKeys(w) || g.Requested.MilliCPU != w.Requested.MilliCPU ||
				g.Requested.Memory != w.Requested.Memory || g.NonZeroRequested.MilliCPU != w.NonZeroRequested.MilliCPU || g.NonZeroRequested.Memory != w.NonZeroRequested.Memory {
				t.Fatalf("node %s: pods %s cpu %d, want %s cpu %d", g.Name(), podKeys(g), g.Requested.MilliCPU, podKeys(w), w.Requested.MilliCPU)
			}
		}
		fresh.nominatedOn("")
		for n, list := range fresh.nominated.byNode {
			var keys []string
			for _, np := range list {
				keys = append(keys, np.key)
			}
			if fmt.Sprint(keys) != fmt.Sprint(gotNominated[n.Name]) {
				t.Fatalf("nominated to %s: %v, want %v", n.Name, gotNominated[n.Name], keys)
			}
			delete(gotNominated, n.Name)
		}
		if len(gotNominated) > 0 {
			t.Fatalf("stale nominations %v", gotNominated)
		}
	}
	if err := sim.Settle(s, []sim.Controller{sc}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if checks < 5 {
		t.Fatalf("only %d preemptions checked", checks)
	}
	for _, p := range s.Pods {
		if p.Spec.Priority != nil && *p.Spec.Priority == 1000 && p.Spec.NodeName == "" {
			t.Errorf("urgent pod %s not bound", p.Name)
		}
	}
}

func podKeys(ni *framework.NodeInfo) string {
	var keys []string
	for _, p := range ni.Pods {
		keys = append(keys, cluster.Key(p.Pod.Namespace, p.Pod.Name))
	}
	return fmt.Sprint(keys)
}
