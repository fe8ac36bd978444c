package scheduler

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestEquivalentAnswersAsFilter: pods of one equivalence group asked
// through Equivalent get Filter's answers while pods are placed pod after
// pod — for plain pods (their PreFilter read the pod alone and is shared),
// for pods with anti-affinity (each runs its own), and for plain pods after
// an anti-affinity pod joins (the shared result is dropped).
func TestEquivalentAnswersAsFilter(t *testing.T) {
	plain := func(name string) *v1.Pod { return plugintest.SizedPod(name, "600m", "") }
	solo := func(name string) *v1.Pod {
		p := plain(name)
		p.Labels = map[string]string{"app": "solo"}
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "solo"}}}}}}
		return p
	}
	// repel is an anti-affinity pod that turns away the plain pods.
	repel := func() *v1.Pod {
		p := plain("repel")
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "plain"}}}}}}
		return p
	}
	for _, tc := range []struct {
		name  string
		pod   func(string) *v1.Pod
		first *v1.Pod // placed on n0 before the group, if set
		// shared tells whether the group's answers come from one PreFilter.
		shared bool
	}{
		{"plain", plain, nil, true},
		{"anti-affinity", solo, nil, false},
		{"plain after an anti-affinity pod", func(n string) *v1.Pod { p := plain(n); p.Labels = map[string]string{"role": "plain"}; return p }, repel(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []*v1.Node
			for i := 0; i < 3; i++ {
				name := fmt.Sprintf("n%d", i)
				nodes = append(nodes, plugintest.WithLabels(plugintest.SizedNode(name, "2", "8Gi", 110), v1.LabelHostname, name))
			}
			sim := nil2(New().Simulate(newState("1.36", nodes)))
			var group *PreFiltered
			for k := 0; k < 8; k++ {
				pod := tc.pod(fmt.Sprintf("p%d", k))
				var pf *PreFiltered
				if group == nil {
					pf = sim.PreFilter(pod)
					group = pf
				} else {
					pf = group.Equivalent(pod)
				}
				if k == 1 && tc.first != nil {
					if err := sim.Assume(tc.first, "n0"); err != nil {
						t.Fatal(err)
					}
				}
				placed := ""
				for _, n := range sim.Nodes() {
					got, want := pf.Filter(n), sim.Filter(pod, n)
					if got.IsSuccess() != want.IsSuccess() || got.Message() != want.Message() {
						t.Fatalf("pod %d on %s: Equivalent %v, Filter %v", k, n, got, want)
					}
					if placed == "" && got.IsSuccess() {
						placed = n
					}
				}
				if k == 1 && pf.state == group.state != tc.shared {
					t.Fatalf("second pod shares the first one's PreFilter: %v, want %v", !tc.shared, tc.shared)
				}
				if placed != "" {
					if err := sim.Assume(pod, placed); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// TestFitBoundRejects: a node whose free cpu or memory (Free) is below the
// pod's bound (FitBound), or that has no pod slot, is one Filter rejects.
func TestFitBoundRejects(t *testing.T) {
	nodes := []*v1.Node{
		plugintest.SizedNode("roomy", "4", "8Gi", 110),
		plugintest.SizedNode("tight", "1", "8Gi", 110),
		plugintest.SizedNode("full", "4", "8Gi", 1),
	}
	sim := nil2(New().Simulate(newState("1.36", nodes, plugintest.OnNode(plugintest.SizedPod("x", "100m", ""), "full"))))
	pf := sim.PreFilter(plugintest.SizedPod("p", "1500m", "1Gi"))
	cpu, mem, ok := pf.FitBound()
	if !ok || cpu != 1500 || mem != 1<<30 {
		t.Fatalf("FitBound = %d, %d, %v", cpu, mem, ok)
	}
	for _, n := range []string{"roomy", "tight", "full"} {
		fc, fm, slots, ok := sim.Free(n)
		if !ok {
			t.Fatalf("no node %s", n)
		}
		bounded := slots < 1 || fc < cpu || fm < mem
		if bounded && pf.Filter(n).IsSuccess() {
			t.Fatalf("%s: free %d/%d/%d under the bound, yet Filter passes", n, fc, fm, slots)
		}
		if n == "roomy" && !pf.Filter(n).IsSuccess() {
			t.Fatalf("roomy rejected the pod")
		}
	}
}
