package podtopologyspread

import (
	"fmt"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// preScoreCounts runs PreScore over the feasible nodes and returns its
// domain counts and ignored nodes.
func preScoreCounts(t *testing.T, pl *Plugin, h *pt.Handle, pod *v1.Pod, feasible []string) ([]map[string]int64, []string) {
	t.Helper()
	var nodes []*framework.NodeInfo
	for _, n := range feasible {
		nodes = append(nodes, h.Node(n))
	}
	cs := framework.NewCycleState()
	if st := pl.PreScore(cs, framework.NewPodInfo(pod, true), nodes); !st.IsSuccess() {
		t.Fatalf("PreScore: %v", st)
	}
	s, err := getPreScoreState(cs)
	if err != nil {
		t.Fatal(err)
	}
	return s.topologyValueToPodCounts, sets.List(s.ignoredNodes)
}

func honorTaints(c tsc) tsc {
	p := v1.NodeInclusionPolicyHonor
	c.NodeTaintsPolicy = &p
	return c
}

// TestPreScoreIndexHonoursPolicies binds pods one by one and checks that
// PreScore counting from the index's per-class node lists gives the counts
// and scores of the walk over every node when inclusion policies filter
// nodes: a nodeSelector, a required node affinity, honoured taints, and
// required keys that a node lacks.
func TestPreScoreIndexHonoursPolicies(t *testing.T) {
	var nodes []*v1.Node
	for i := 0; i < 9; i++ {
		lbl := map[string]string{pt.ZoneLabel: fmt.Sprintf("z%d", i%3), "tier": fmt.Sprintf("t%d", i%2)}
		var taints []v1.Taint
		switch i {
		case 7:
			delete(lbl, pt.ZoneLabel)
		case 4:
			taints = append(taints, pt.NoSchedule("dedicated", "x"))
		}
		nodes = append(nodes, pt.Node(fmt.Sprintf("n%d", i), lbl, taints...))
	}
	selected := func() *v1.Pod {
		p := rsPod("in", "")
		p.Spec.NodeSelector = map[string]string{"tier": "t0"}
		return p
	}
	affine := func() *v1.Pod {
		p := rsPod("in", "")
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: pt.ZoneLabel, Operator: v1.NodeSelectorOpNotIn, Values: []string{"z1"}}}}}}}}
		return p
	}
	incoming := map[string]func() *v1.Pod{
		"system defaults, nodeSelector":  selected,
		"system defaults, node affinity": affine,
		"own constraints, taints honoured": func() *v1.Pod {
			return withSpread(pt.Pod(ns, "in", "", w), honorTaints(spread(pt.ZoneLabel, 1, v1.ScheduleAnyway, w)), spread(v1.LabelHostname, 2, v1.ScheduleAnyway, w))
		},
		"own constraints, nodeSelector, unzoned node": func() *v1.Pod {
			p := withSpread(pt.Pod(ns, "in", "", w), spread(pt.ZoneLabel, 1, v1.ScheduleAnyway, w), spread("tier", 1, v1.ScheduleAnyway, w))
			p.Spec.NodeSelector = map[string]string{"tier": "t1"}
			return p
		},
	}
	h := &logHandle{Handle: pt.NewHandle(nodes, nil)}
	h.ReplicaSetObjs = []*appsv1.ReplicaSet{rs}
	incremental := New(h)
	feasible := []string{"n0", "n1", "n2", "n4", "n6", "n7", "n8"}
	check := func(step string) {
		for name, pod := range incoming {
			gotC, gotI := preScoreCounts(t, incremental, h.Handle, pod(), feasible)
			wantC, wantI := preScoreCounts(t, New(h.Handle), h.Handle, pod(), feasible)
			if !reflect.DeepEqual(gotC, wantC) || !reflect.DeepEqual(gotI, wantI) {
				t.Fatalf("%s %s: index %v %v, walk %v %v", step, name, gotC, gotI, wantC, wantI)
			}
			_, gotRaw, gotNorm := pt.RunScore(incremental, h.Handle, pod(), feasible)
			_, wantRaw, wantNorm := pt.RunScore(New(h.Handle), h.Handle, pod(), feasible)
			if !reflect.DeepEqual(gotRaw, wantRaw) || !reflect.DeepEqual(gotNorm, wantNorm) {
				t.Fatalf("%s %s: scores %v %v, walk %v %v", step, name, gotRaw, gotNorm, wantRaw, wantNorm)
			}
		}
	}
	check("empty")
	for i, node := range []string{"n0", "n4", "n7", "n1", "n3", "n0", "n5"} {
		h.bind(rsPod(fmt.Sprintf("e%d", i), node))
		h.bind(pt.Pod(ns, fmt.Sprintf("x%d", i), node, map[string]string{"app": "x"}))
		h.bind(pt.Pod("other", fmt.Sprintf("o%d", i), node, w))
		check(fmt.Sprintf("after bind %d", i))
	}
	// The counts must have moved, or the test proves nothing.
	c, _ := preScoreCounts(t, incremental, h.Handle, selected(), feasible)
	if c[1]["z0"] == 0 {
		t.Fatalf("no pods counted in z0: %v", c)
	}
}

// snapHandle is a logging handle whose snapshot can be replaced.
type snapHandle struct {
	*pt.Handle
	id uint64
}

func (h *snapHandle) AddedPods() (uint64, []helper.AddedPod) { return h.id, nil }

// TestScoreAfterRelabel checks that a plugin that scored one snapshot
// scores a new one, where a node changed zone, as a fresh plugin does.
func TestScoreAfterRelabel(t *testing.T) {
	build := func(zoneOfN0 string) *pt.Handle {
		var nodes []*v1.Node
		for i := 0; i < 6; i++ {
			nodes = append(nodes, pt.Node(fmt.Sprintf("n%d", i), map[string]string{pt.ZoneLabel: fmt.Sprintf("z%d", i%3)}))
		}
		nodes[0].Labels[pt.ZoneLabel] = zoneOfN0
		pods := []*v1.Pod{rsPod("e0", "n0"), rsPod("e1", "n0"), rsPod("e2", "n1")}
		h := pt.NewHandle(nodes, pods)
		h.ReplicaSetObjs = []*appsv1.ReplicaSet{rs}
		return h
	}
	h := &snapHandle{Handle: build("z0"), id: 1}
	incremental := New(h)
	feasible := []string{"n0", "n1", "n2", "n3"}
	var first map[string]int64
	for step, zone := range []string{"z0", "z1", "z2"} {
		h.Handle, h.id = build(zone), uint64(step+1)
		_, gotRaw, gotNorm := pt.RunScore(incremental, h.Handle, rsPod("in", ""), feasible)
		_, wantRaw, wantNorm := pt.RunScore(New(h.Handle), h.Handle, rsPod("in", ""), feasible)
		if !reflect.DeepEqual(gotRaw, wantRaw) || !reflect.DeepEqual(gotNorm, wantNorm) {
			t.Fatalf("n0 in %s: incremental %v %v, fresh %v %v", zone, gotRaw, gotNorm, wantRaw, wantNorm)
		}
		if step == 0 {
			first = pt.Scores(gotRaw)
		} else if reflect.DeepEqual(first, pt.Scores(gotRaw)) {
			t.Fatalf("n0 in %s: relabel did not change the scores %v", zone, first)
		}
	}
}
