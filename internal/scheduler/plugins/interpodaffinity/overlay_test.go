package interpodaffinity

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// deepCounts is the representation the overlay replaced: every clone owns
// full maps of the three counts, which AddPod/RemovePod write in place.
type deepCounts struct {
	existing, aff, anti topologyCounts
}

func deepOf(s *preFilterState) *deepCounts {
	return &deepCounts{s.existingAntiAffinityCounts.toMap(), s.affinityCounts.toMap(), s.antiAffinityCounts.toMap()}
}

func (d *deepCounts) clone() *deepCounts {
	return &deepCounts{maps.Clone(d.existing), maps.Clone(d.aff), maps.Clone(d.anti)}
}

// bump is the in-place topologyCounts.update the overlay replaced.
func bump(m topologyCounts, node *v1.Node, key string, delta int64) {
	value, ok := node.Labels[key]
	if !ok {
		return
	}
	p := topologyPair{key: key, value: value}
	m[p] += delta
	if m[p] == 0 {
		delete(m, p)
	}
}

// update is the in-place updateWithPod the overlay replaced.
func (d *deepCounts) update(s *preFilterState, pi *framework.PodInfo, node *v1.Node, delta int64) {
	for i := range pi.RequiredAntiAffinityTerms {
		if pi.RequiredAntiAffinityTerms[i].Matches(s.pod, s.namespaceLabels) {
			bump(d.existing, node, pi.RequiredAntiAffinityTerms[i].TopologyKey, delta)
		}
	}
	if podMatchesAllTerms(s.requiredAffinity, pi.Pod, nil) {
		for i := range s.requiredAffinity {
			bump(d.aff, node, s.requiredAffinity[i].TopologyKey, delta)
		}
	}
	for i := range s.requiredAntiAffinity {
		if s.requiredAntiAffinity[i].Matches(pi.Pod, nil) {
			bump(d.anti, node, s.requiredAntiAffinity[i].TopologyKey, delta)
		}
	}
}

// filter is Filter over the full maps.
func (d *deepCounts) filter(s *preFilterState, node *v1.Node) pt.Verdict {
	exist := true
	for i := range s.requiredAffinity {
		key := s.requiredAffinity[i].TopologyKey
		value, ok := node.Labels[key]
		if !ok {
			return affFail
		}
		if d.aff[topologyPair{key, value}] <= 0 {
			exist = false
		}
	}
	if !exist && !(len(d.aff) == 0 && podMatchesAllTerms(s.requiredAffinity, s.pod, s.namespaceLabels)) {
		return affFail
	}
	for i := range s.requiredAntiAffinity {
		key := s.requiredAntiAffinity[i].TopologyKey
		if value, ok := node.Labels[key]; ok && d.anti[topologyPair{key, value}] > 0 {
			return antiFail
		}
	}
	for k, v := range node.Labels {
		if d.existing[topologyPair{k, v}] > 0 {
			return exFail
		}
	}
	return pass
}

func (d *deepCounts) equal(t *testing.T, where string, pl *Plugin, cs *framework.CycleState, pi *framework.PodInfo, nodes []*framework.NodeInfo) {
	t.Helper()
	s, err := getPreFilterState(cs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		lazy *lazyCounts
		deep topologyCounts
	}{{"existing", s.existingAntiAffinityCounts, d.existing}, {"affinity", s.affinityCounts, d.aff}, {"anti", s.antiAffinityCounts, d.anti}} {
		if got := c.lazy.toMap(); !maps.Equal(got, c.deep) {
			t.Fatalf("%s: %s counts %v, deep copy %v", where, c.name, got, c.deep)
		}
		if c.lazy.empty() != (len(c.deep) == 0) {
			t.Fatalf("%s: %s empty = %v, deep copy has %d pairs", where, c.name, c.lazy.empty(), len(c.deep))
		}
		for _, ni := range nodes {
			for k, v := range ni.Node.Labels {
				if got, want := c.lazy.get(k, v), c.deep[topologyPair{k, v}]; got != want {
					t.Fatalf("%s: %s get(%s=%s) = %d, deep copy %d", where, c.name, k, v, got, want)
				}
			}
		}
	}
	for _, ni := range nodes {
		// A copy of the node takes Filter's map path, as in the dry run.
		if got, want := pt.VerdictOf(pl.Filter(cs, pi, ni.Clone())), d.filter(s, ni.Node); got != want {
			t.Fatalf("%s: node %s = %v, deep copy %v", where, ni.Name(), got, want)
		}
	}
}

// TestOverlayMatchesDeepCopy applies random AddPod/RemovePod/Clone
// sequences to the copy-on-write counts and to full copies, and compares
// every count, emptiness and Filter verdict, at every clone depth.
func TestOverlayMatchesDeepCopy(t *testing.T) {
	checked := 0
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 17))
		var nodes []*v1.Node
		for i := 0; i < 8; i++ {
			lbl := map[string]string{pt.ZoneLabel: fmt.Sprintf("z%d", i%3)}
			if i%3 == 0 {
				lbl["rack"] = fmt.Sprintf("r%d", i%2)
			}
			nodes = append(nodes, pt.Node(fmt.Sprintf("n%d", i), lbl))
		}
		var pods []*v1.Pod
		for i := 0; i < 10; i++ {
			pods = append(pods, randomFilterPod(r, fmt.Sprintf("e%d", i), fmt.Sprintf("n%d", r.IntN(len(nodes)))))
		}
		h := pt.NewHandle(nodes, pods)
		pl := New(h)
		pi := framework.NewPodInfo(randomFilterPod(r, "in", ""), true)
		root := framework.NewCycleState()
		if _, st := pl.PreFilter(root, pi, h.Nodes()); !st.IsSuccess() {
			continue
		}
		s0, _ := getPreFilterState(root)
		type level struct {
			cs   *framework.CycleState
			deep *deepCounts
		}
		stack := []level{{root, deepOf(s0)}}
		for step := 0; step < 50; step++ {
			top := stack[len(stack)-1]
			s, _ := getPreFilterState(top.cs)
			ni := h.NodeInfos[r.IntN(len(h.NodeInfos))]
			switch op := r.IntN(6); {
			case op <= 1:
				p := framework.NewPodInfo(randomFilterPod(r, fmt.Sprintf("x%d", step), ni.Name()), true)
				pl.AddPod(top.cs, pi, p, ni)
				top.deep.update(s, p, ni.Node, 1)
			case op <= 3:
				p := framework.NewPodInfo(pods[r.IntN(len(pods))], true)
				on := h.Node(p.Pod.Spec.NodeName)
				pl.RemovePod(top.cs, pi, p, on)
				top.deep.update(s, p, on.Node, -1)
			case op == 4 && len(stack) < 4:
				stack = append(stack, level{top.cs.Clone(), top.deep.clone()})
			case op == 5 && len(stack) > 1:
				stack = stack[:len(stack)-1]
			}
			for d, l := range stack {
				l.deep.equal(t, fmt.Sprintf("seed %d step %d level %d", seed, step, d), pl, l.cs, pi, h.NodeInfos)
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no pod passed PreFilter")
	}
}

// TestLazyCountsTable pins the overlay's bookkeeping of emptiness, which
// decides the self-affinity rule (the first pod of a group).
func TestLazyCountsTable(t *testing.T) {
	src := func() []countSource {
		return []countSource{{key: "zone", counts: map[string]int64{"z1": 1, "z2": 2}}, {key: "zone", counts: map[string]int64{"z1": 1}}}
	}
	type edit struct {
		value string
		delta int64
	}
	tests := []struct {
		name      string
		sources   []countSource
		edits     []edit
		wantEmpty bool
		want      topologyCounts
	}{
		{name: "sources alone", sources: src(), want: topologyCounts{{"zone", "z1"}: 2, {"zone", "z2"}: 2}},
		{name: "every pair removed is empty", sources: src(),
			edits: []edit{{"z1", -1}, {"z1", -1}, {"z2", -2}}, wantEmpty: true, want: topologyCounts{}},
		{name: "one pair left is not empty", sources: src(),
			edits: []edit{{"z1", -2}, {"z2", -1}}, want: topologyCounts{{"zone", "z2"}: 1}},
		{name: "removed then a new pair", sources: src(),
			edits: []edit{{"z1", -2}, {"z2", -2}, {"z3", 1}}, want: topologyCounts{{"zone", "z3"}: 1}},
		{name: "a negative count is a pair", edits: []edit{{"z9", -1}}, want: topologyCounts{{"zone", "z9"}: -1}},
		{name: "added and removed again is empty", edits: []edit{{"z9", 1}, {"z9", -1}}, wantEmpty: true, want: topologyCounts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []*sourcesSize{nil, {}} {
				c := &lazyCounts{sources: tt.sources, size: size}
				for _, e := range tt.edits {
					c.add("zone", e.value, e.delta)
				}
				if c.empty() != tt.wantEmpty {
					t.Errorf("empty = %v, want %v", c.empty(), tt.wantEmpty)
				}
				if got := c.toMap(); !maps.Equal(got, tt.want) {
					t.Errorf("counts = %v, want %v", got, tt.want)
				}
			}
			if len(tt.sources) > 0 && (tt.sources[0].counts["z1"] != 1 || tt.sources[1].counts["z1"] != 1) {
				t.Errorf("shared sources written: %v", tt.sources)
			}
		})
	}
}
