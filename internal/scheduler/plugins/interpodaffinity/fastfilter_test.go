package interpodaffinity

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// randomFilterPod is a pod with random required pod (anti-)affinity over
// zone, hostname and a key few nodes carry.
func randomFilterPod(r *rand.Rand, name, node string) *v1.Pod {
	apps := []string{"web", "db", "cache"}
	p := pt.Pod(ns, name, node, map[string]string{"app": apps[r.IntN(3)]})
	keys := []string{pt.ZoneLabel, pt.HostLabel, "rack"}
	term := func() v1.PodAffinityTerm { return pt.Term(keys[r.IntN(3)], map[string]string{"app": apps[r.IntN(3)]}) }
	a := &v1.Affinity{PodAffinity: &v1.PodAffinity{}, PodAntiAffinity: &v1.PodAntiAffinity{}}
	for k := r.IntN(3); k > 0; k-- {
		if r.IntN(2) == 0 {
			a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term())
		} else {
			a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term())
		}
	}
	p.Spec.Affinity = a
	return p
}

// TestFastFilterMatchesMapPath checks, on random clusters as pods bind one
// by one, that the node-set verdicts equal the per-node map walk for every
// node, and that the sets are dropped once the counts change.
func TestFastFilterMatchesMapPath(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		var nodes []*v1.Node
		for i := 0; i < 10; i++ {
			lbl := map[string]string{pt.ZoneLabel: fmt.Sprintf("z%d", i%3)}
			if i%4 == 0 {
				lbl["rack"] = fmt.Sprintf("r%d", i%8)
			}
			if i == 7 {
				lbl = map[string]string{}
			}
			nodes = append(nodes, pt.Node(fmt.Sprintf("n%d", i), lbl))
		}
		h := &logHandle{Handle: pt.NewHandle(nodes, nil)}
		pl := New(h)
		checked := 0
		for step := 0; step < 30; step++ {
			for k := 0; k < 3; k++ {
				pi := framework.NewPodInfo(randomFilterPod(r, "in", ""), true)
				cs := framework.NewCycleState()
				if _, st := pl.PreFilter(cs, pi, h.Nodes()); !st.IsSuccess() {
					continue
				}
				s, err := getPreFilterState(cs)
				if err != nil {
					t.Fatal(err)
				}
				if s.fast == nil {
					t.Fatalf("seed %d: no node sets for a fresh PreFilter", seed)
				}
				slow := *s
				slow.fast = nil
				slowCS := framework.NewCycleState()
				slowCS.Write(preFilterStateKey, &slow)
				for _, ni := range h.Nodes() {
					got, want := pl.Filter(cs, pi, ni), pl.Filter(slowCS, pi, ni)
					if pt.VerdictOf(got) != pt.VerdictOf(want) {
						t.Fatalf("seed %d step %d node %s: sets %v, maps %v", seed, step, ni.Name(), pt.VerdictOf(got), pt.VerdictOf(want))
					}
					checked++
				}
				// A hypothetical pod added to a node invalidates the sets.
				extra := framework.NewPodInfo(pt.Pod(ns, "x", "", map[string]string{"app": "web"}), true)
				if st := pl.AddPod(cs, pi, extra, h.Nodes()[0]); !st.IsSuccess() || s.fast != nil {
					t.Fatalf("AddPod kept the node sets")
				}
			}
			h.bind(randomFilterPod(r, fmt.Sprintf("e%d", step), fmt.Sprintf("n%d", r.IntN(len(nodes)))))
		}
		if checked == 0 {
			t.Fatalf("seed %d checked nothing", seed)
		}
	}
}
