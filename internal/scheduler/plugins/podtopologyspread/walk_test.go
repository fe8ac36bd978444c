package podtopologyspread

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// plainWalk is upstream's PreFilter count over every node, label maps and all.
func plainWalk(pl *Plugin, pod *v1.Pod, nodes []*framework.NodeInfo) []map[string]int {
	constraints, err := pl.constraintsFor(pod, v1.DoNotSchedule)
	if err != nil {
		panic(err)
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	out := make([]map[string]int, len(constraints))
	for i := range out {
		out[i] = map[string]int{}
	}
	for _, ni := range nodes {
		node := ni.Node
		if node == nil || !nodeHasAllKeys(node.Labels, constraints) {
			continue
		}
		for i := range constraints {
			c := &constraints[i]
			if c.matchNodeInclusionPolicies(pod, node, required) {
				out[i][node.Labels[c.TopologyKey]] += countPodsMatchSelector(ni.Pods, c.Selector, pod.Namespace)
			}
		}
	}
	return out
}

// TestIndexedWalkMatchesPlainWalk checks PreFilter's counts for constraints
// with inclusion policies (which take the walk over every node) against the
// plain walk on random clusters of tainted and partly labelled nodes, as
// pods bind one by one.
func TestIndexedWalkMatchesPlainWalk(t *testing.T) {
	honor, ignore := v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore
	apps := []map[string]string{{"app": "a"}, {"app": "b"}}
	for seed := uint64(1); seed <= 15; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		var nodes []*v1.Node
		for i := 0; i < 12; i++ {
			lbl := map[string]string{pt.ZoneLabel: fmt.Sprintf("z%d", r.IntN(3)), "disk": []string{"ssd", "hdd"}[r.IntN(2)]}
			if r.IntN(5) == 0 {
				delete(lbl, pt.ZoneLabel)
			}
			var taints []v1.Taint
			if r.IntN(3) == 0 {
				taints = append(taints, pt.NoSchedule("dedicated", "x"))
			}
			nodes = append(nodes, pt.Node(fmt.Sprintf("n%02d", i), lbl, taints...))
		}
		h := &logHandle{Handle: pt.NewHandle(nodes, nil)}
		pl := New(h)
		for step := 0; step < 20; step++ {
			for k := 0; k < 3; k++ {
				app := apps[r.IntN(2)]
				var cs []tsc
				for _, key := range []string{pt.ZoneLabel, v1.LabelHostname, "disk"} {
					if r.IntN(2) == 0 {
						continue
					}
					c := spread(key, 1, v1.DoNotSchedule, apps[r.IntN(2)])
					c.NodeTaintsPolicy = []*v1.NodeInclusionPolicy{&honor, &ignore, nil}[r.IntN(3)]
					c.NodeAffinityPolicy = []*v1.NodeInclusionPolicy{&honor, &ignore, nil}[r.IntN(3)]
					cs = append(cs, c)
				}
				if len(cs) == 0 {
					continue
				}
				pod := withSpread(pt.Pod(ns, "in", "", app), cs...)
				if r.IntN(2) == 0 {
					pod.Spec.NodeSelector = map[string]string{"disk": "ssd"}
				}
				if r.IntN(2) == 0 {
					pod.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
				}
				got, _ := preFilterCounts(t, pl, h, pod)
				if want := plainWalk(pl, pod, h.Nodes()); !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d step %d: PreFilter %v, plain walk %v", seed, step, got, want)
				}
				checkFastFilter(t, pl, h.Nodes(), pod)
			}
			h.bind(pt.Pod(ns, fmt.Sprintf("e%d", step), fmt.Sprintf("n%02d", r.IntN(len(nodes))), apps[r.IntN(2)]))
		}
	}
}

// checkFastFilter compares Filter by node position with Filter through the
// label maps on every node, for pod and for another pod reusing the state.
func checkFastFilter(t *testing.T, pl *Plugin, nodes []*framework.NodeInfo, pod *v1.Pod) {
	t.Helper()
	pi := framework.NewPodInfo(pod, true)
	cs := framework.NewCycleState()
	if _, st := pl.PreFilter(cs, pi, nodes); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	s, err := getPreFilterState(cs)
	if err != nil {
		t.Fatal(err)
	}
	if s.fast == nil {
		t.Fatal("no renumbered counts")
	}
	for i, m := range countMaps(s) {
		if got, want := *s.criticalPaths[i], *sortedPaths(m); got != want {
			t.Fatalf("constraint %d: critical paths %v, by sorting %v", i, got, want)
		}
		// The renumbered counts (made while counting, or by pathsByID)
		// are the map's, 0 for values that are no domain.
		for id, v := range pl.index.ValueNames(s.constraints[i].TopologyKey) {
			if got, want := s.fast.counts[i][id], m[v]; got != want {
				t.Fatalf("constraint %d value %q: renumbered count %d, map %d", i, v, got, want)
			}
		}
	}
	if s.idCounts != nil {
		t.Fatal("PreFilter kept the counts by id after building the fast filter")
	}
	slow := *s
	slow.fast = nil
	slowCS := framework.NewCycleState()
	slowCS.Write(preFilterStateKey, &slow)
	other := framework.NewPodInfo(pt.Pod(ns, "other", "", map[string]string{"app": "b"}), true)
	for _, p := range []*framework.PodInfo{pi, other} {
		for _, ni := range nodes {
			got, want := pl.Filter(cs, p, ni), pl.Filter(slowCS, p, ni)
			if pt.VerdictOf(got) != pt.VerdictOf(want) {
				t.Fatalf("%s on %s: by position %v, by labels %v", p.Pod.Name, ni.Name(), pt.VerdictOf(got), pt.VerdictOf(want))
			}
		}
	}
}
