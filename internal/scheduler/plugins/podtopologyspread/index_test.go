package podtopologyspread

import (
	"fmt"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// logHandle adds a pod log to a plugintest handle, as the scheduler's does.
type logHandle struct {
	*pt.Handle
	added []helper.AddedPod
}

func (h *logHandle) AddedPods() (uint64, []helper.AddedPod) { return 3, h.added }

func (h *logHandle) bind(p *v1.Pod) {
	pi := framework.NewPodInfo(p, true)
	ni := h.Node(p.Spec.NodeName)
	ni.AddPod(pi)
	h.added = append(h.added, helper.AddedPod{Node: ni, Pod: pi})
	h.Refresh()
}

// TestIndexFollowsBoundPods binds pods one by one and checks that the
// plugin counting from its per-snapshot index gives the verdicts of a
// plugin that walks every node (plugintest's handle keeps no log).
func TestIndexFollowsBoundPods(t *testing.T) {
	app := map[string]string{"app": "s"}
	var nodes []*v1.Node
	for i := 0; i < 6; i++ {
		lbl := map[string]string{pt.ZoneLabel: fmt.Sprintf("z%d", i%3)}
		if i == 5 {
			lbl = map[string]string{}
		}
		nodes = append(nodes, pt.Node(fmt.Sprintf("n%d", i), lbl))
	}
	h := &logHandle{Handle: pt.NewHandle(nodes, nil)}
	incremental := New(h)
	incoming := withSpread(pt.Pod(ns, "in", "", app), spread(pt.ZoneLabel, 1, v1.DoNotSchedule, app))
	check := func(step string) map[string]pt.Verdict {
		_, got := pt.RunFilter(incremental, h.Handle, incoming)
		_, want := pt.RunFilter(New(h.Handle), h.Handle, incoming)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: incremental %v, fresh %v", step, got, want)
		}
		return got
	}
	check("empty")
	for i, node := range []string{"n0", "n1", "n3", "n5"} {
		h.bind(pt.Pod(ns, fmt.Sprintf("e%d", i), node, app))
		check(fmt.Sprintf("after bind %d", i))
	}
	// z0 holds 2 and z2 holds 0 now: the index must have seen the binds.
	if v := check("final"); v["n0"].Code != framework.Unschedulable {
		t.Fatalf("n0 should exceed the skew, got %v", v)
	}
}

// TestPreScoreIndexFollowsBoundPods binds pods one by one and checks that
// scoring from the per-snapshot index (and Score's class cache) gives the
// raw and normalized scores of a plugin that walks every node, for system
// default and explicit ScheduleAnyway constraints, with and without a node
// lacking the zone label (where the index must not be used).
func TestPreScoreIndexFollowsBoundPods(t *testing.T) {
	for _, tc := range []struct {
		name     string
		unzoned  bool
		incoming func() *v1.Pod
	}{
		{"system defaults", false, func() *v1.Pod { return rsPod("in", "") }},
		{"system defaults, unzoned node", true, func() *v1.Pod { return rsPod("in", "") }},
		{"own constraints", false, func() *v1.Pod {
			return withSpread(pt.Pod(ns, "in", "", w), spread(pt.ZoneLabel, 1, v1.ScheduleAnyway, w), spread(v1.LabelHostname, 2, v1.ScheduleAnyway, w))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []*v1.Node
			for i := 0; i < 6; i++ {
				lbl := map[string]string{pt.ZoneLabel: fmt.Sprintf("z%d", i%3)}
				if tc.unzoned && i == 5 {
					lbl = map[string]string{}
				}
				nodes = append(nodes, pt.Node(fmt.Sprintf("n%d", i), lbl))
			}
			h := &logHandle{Handle: pt.NewHandle(nodes, nil)}
			h.ReplicaSetObjs = []*appsv1.ReplicaSet{rs}
			incremental := New(h)
			feasible := []string{"n0", "n1", "n2", "n4", "n5"}
			check := func(step string) map[string]int64 {
				_, gotRaw, gotNorm := pt.RunScore(incremental, h.Handle, tc.incoming(), feasible)
				_, wantRaw, wantNorm := pt.RunScore(New(h.Handle), h.Handle, tc.incoming(), feasible)
				if !reflect.DeepEqual(gotRaw, wantRaw) || !reflect.DeepEqual(gotNorm, wantNorm) {
					t.Fatalf("%s: incremental %v %v, fresh %v %v", step, gotRaw, gotNorm, wantRaw, wantNorm)
				}
				return pt.Scores(gotRaw)
			}
			first := check("empty")
			for i, node := range []string{"n0", "n0", "n3", "n5", "n1"} {
				h.bind(rsPod(fmt.Sprintf("e%d", i), node))
				// Pods of another namespace or class must not count.
				h.bind(pt.Pod("other", fmt.Sprintf("o%d", i), node, w))
				h.bind(pt.Pod(ns, fmt.Sprintf("x%d", i), node, map[string]string{"app": "x"}))
				check(fmt.Sprintf("after bind %d", i))
			}
			if last := check("final"); reflect.DeepEqual(first, last) {
				t.Fatalf("binds did not change the scores: %v", last)
			}
		})
	}
}
