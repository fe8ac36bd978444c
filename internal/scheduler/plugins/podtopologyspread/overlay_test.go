package podtopologyspread

import (
	"fmt"
	"maps"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// deepState is the representation the overlay replaced: every clone owns
// a full copy of the counts, and AddPod/RemovePod write them in place.
type deepState struct {
	counts []map[string]int
	paths  []criticalPaths
}

func deepOf(s *preFilterState) *deepState {
	d := &deepState{}
	for i := range s.constraints {
		m := maps.Clone(s.tpValueToMatchNum[i].asMap())
		d.counts = append(d.counts, m)
		d.paths = append(d.paths, *s.criticalPaths[i])
	}
	return d
}

func (d *deepState) clone() *deepState {
	c := &deepState{paths: append([]criticalPaths(nil), d.paths...)}
	for _, m := range d.counts {
		c.counts = append(c.counts, maps.Clone(m))
	}
	return c
}

// update is the in-place updateWithPod the overlay replaced.
func (d *deepState) update(s *preFilterState, updated, incoming *v1.Pod, node *v1.Node, delta int) {
	if updated.Namespace != incoming.Namespace || !nodeHasAllKeys(node.Labels, s.constraints) {
		return
	}
	required := nodeaffinity.GetRequiredNodeAffinity(incoming)
	for i := range s.constraints {
		c := &s.constraints[i]
		if !c.Selector.Matches(labels.Set(updated.Labels)) || !c.matchNodeInclusionPolicies(incoming, node, required) {
			continue
		}
		v := node.Labels[c.TopologyKey]
		d.counts[i][v] += delta
		d.paths[i].update(v, d.counts[i][v])
	}
}

// filter is Filter's map path over the deep copy.
func (d *deepState) filter(s *preFilterState, pi *framework.PodInfo, node *v1.Node) pt.Verdict {
	for i := range s.constraints {
		c := &s.constraints[i]
		value, ok := node.Labels[c.TopologyKey]
		if !ok {
			return labelFail
		}
		min := d.paths[i][0].MatchNum
		if len(d.counts[i]) < int(c.MinDomains) {
			min = 0
		}
		if d.counts[i][value]+s.self(i, pi)-min > int(c.MaxSkew) {
			return skewFail
		}
	}
	return pass
}

// equal checks that s answers every query as d does.
func (d *deepState) equal(t *testing.T, where string, s *preFilterState, pi *framework.PodInfo, nodes []*framework.NodeInfo, values []string) {
	t.Helper()
	for i := range s.constraints {
		if s.domains(i) != len(d.counts[i]) {
			t.Fatalf("%s: constraint %d has %d domains, deep copy %d", where, i, s.domains(i), len(d.counts[i]))
		}
		if *s.criticalPaths[i] != d.paths[i] {
			t.Fatalf("%s: constraint %d paths %v, deep copy %v", where, i, *s.criticalPaths[i], d.paths[i])
		}
		for _, v := range values {
			if s.count(i, v) != d.counts[i][v] {
				t.Fatalf("%s: constraint %d domain %q = %d, deep copy %d", where, i, v, s.count(i, v), d.counts[i][v])
			}
		}
	}
	cs := framework.NewCycleState()
	cs.Write(preFilterStateKey, s)
	pl := &Plugin{}
	for _, ni := range nodes {
		// A copy of the node takes Filter's map path, as in the dry run.
		if got, want := pt.VerdictOf(pl.Filter(cs, pi, ni.Clone())), d.filter(s, pi, ni.Node); got != want {
			t.Fatalf("%s: node %s = %v, deep copy %v", where, ni.Name(), got, want)
		}
	}
}

// TestOverlayMatchesDeepCopy applies random AddPod/RemovePod/Clone
// sequences to the copy-on-write state and to full copies, and compares
// every count, domain number, critical path and Filter verdict.
func TestOverlayMatchesDeepCopy(t *testing.T) {
	zones := []map[string]string{zoneA, zoneB, zoneC, nil}
	var nodes []*v1.Node
	for i := 0; i < 10; i++ {
		nodes = append(nodes, pt.Node(fmt.Sprintf("n%d", i), zones[i%len(zones)]))
	}
	values := []string{"z1", "z2", "z3", "z4", ""}
	for _, n := range nodes {
		values = append(values, n.Name)
	}
	db := map[string]string{"app": "db"}
	minDomains := spread(pt.ZoneLabel, 1, v1.DoNotSchedule, web)
	minDomains.MinDomains = ptr.To[int32](3)
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var pods []*v1.Pod
		for i := 0; i < 12; i++ {
			lbl := web
			if rng.Intn(3) == 0 {
				lbl = db
			}
			pods = append(pods, pt.Pod(ns, fmt.Sprintf("e%d", i), nodes[rng.Intn(len(nodes))].Name, lbl))
		}
		h := pt.NewHandle(nodes, pods)
		pl := New(h)
		byHost := spread(v1.LabelHostname, 2, v1.DoNotSchedule, web)
		if seed%2 == 0 {
			// Half the seeds honour the pod's node selector, which the
			// updates then read.
			honor := v1.NodeInclusionPolicyHonor
			byHost.NodeAffinityPolicy = &honor
		}
		pod := withSpread(pt.Pod(ns, "p", "", web), minDomains, byHost)
		if seed%2 == 0 {
			pod.Spec.NodeSelector = map[string]string{pt.ZoneLabel: zoneA[pt.ZoneLabel]}
		}
		pi := framework.NewPodInfo(pod, true)
		root := framework.NewCycleState()
		if _, st := pl.PreFilter(root, pi, h.Nodes()); !st.IsSuccess() {
			t.Fatal(st.Message())
		}
		s0, _ := getPreFilterState(root)
		type level struct {
			cs   *framework.CycleState
			deep *deepState
		}
		stack := []level{{root, deepOf(s0)}}
		for step := 0; step < 60; step++ {
			top := stack[len(stack)-1]
			s, _ := getPreFilterState(top.cs)
			where := fmt.Sprintf("seed %d step %d depth %d", seed, step, len(stack))
			ni := h.NodeInfos[rng.Intn(len(h.NodeInfos))]
			switch op := rng.Intn(6); {
			case op <= 1:
				lbl := web
				if rng.Intn(4) == 0 {
					lbl = db
				}
				nsName := ns
				if rng.Intn(5) == 0 {
					nsName = "other"
				}
				p := pt.Pod(nsName, fmt.Sprintf("x%d", step), ni.Name(), lbl)
				pl.AddPod(top.cs, pi, framework.NewPodInfo(p, true), ni)
				top.deep.update(s, p, pod, ni.Node, 1)
			case op <= 3:
				p := pods[rng.Intn(len(pods))]
				on := h.Node(p.Spec.NodeName)
				pl.RemovePod(top.cs, pi, framework.NewPodInfo(p, true), on)
				top.deep.update(s, p, pod, on.Node, -1)
			case op == 4 && len(stack) < 4:
				stack = append(stack, level{top.cs.Clone(), top.deep.clone()})
			case op == 5 && len(stack) > 1:
				stack = stack[:len(stack)-1]
			}
			// Every level, not only the top: a clone's edits must not
			// reach its parent, nor the parent's its clones.
			for d, l := range stack {
				sl, _ := getPreFilterState(l.cs)
				l.deep.equal(t, fmt.Sprintf("%s level %d", where, d), sl, pi, h.NodeInfos, values)
			}
		}
	}
}

// TestOverlayTable pins the overlay's bookkeeping on small cases.
func TestOverlayTable(t *testing.T) {
	base := func() *preFilterState {
		return &preFilterState{
			constraints:       []constraint{{}},
			criticalPaths:     []*criticalPaths{newCriticalPaths()},
			tpValueToMatchNum: []*domainCounts{mapCounts(map[string]int{"z1": 2, "z2": 0})},
		}
	}
	tests := []struct {
		name  string
		edits []struct {
			v string
			d int
		}
		wantCount   map[string]int
		wantDomains int
	}{
		{name: "no edits read the shared counts", wantCount: map[string]int{"z1": 2, "z2": 0, "z3": 0}, wantDomains: 2},
		{name: "an edit of a known domain keeps the domain number",
			edits: []struct {
				v string
				d int
			}{{"z1", -1}, {"z1", -1}}, wantCount: map[string]int{"z1": 0, "z2": 0}, wantDomains: 2},
		{name: "a new domain counts once, even when it drops back to zero",
			edits: []struct {
				v string
				d int
			}{{"z3", 1}, {"z3", -1}, {"z3", 1}}, wantCount: map[string]int{"z1": 2, "z3": 1}, wantDomains: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			shared := maps.Clone(s.tpValueToMatchNum[0].asMap())
			for _, e := range tt.edits {
				s.add(0, e.v, e.d)
			}
			for v, n := range tt.wantCount {
				if got := s.count(0, v); got != n {
					t.Errorf("count(%q) = %d, want %d", v, got, n)
				}
			}
			if got := s.domains(0); got != tt.wantDomains {
				t.Errorf("domains = %d, want %d", got, tt.wantDomains)
			}
			if !maps.Equal(shared, s.tpValueToMatchNum[0].asMap()) {
				t.Errorf("shared counts written: %v, were %v", s.tpValueToMatchNum[0].asMap(), shared)
			}
			c := s.Clone().(*preFilterState)
			c.add(0, "z2", 5)
			if s.count(0, "z2") != tt.wantCount["z2"] || c.count(0, "z2") != tt.wantCount["z2"]+5 {
				t.Errorf("clone's edit leaked: original z2 = %d, clone %d", s.count(0, "z2"), c.count(0, "z2"))
			}
		})
	}
}
