package podtopologyspread

import (
	"fmt"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// preFilterCounts runs PreFilter and returns its counts and critical paths.
func preFilterCounts(t *testing.T, pl *Plugin, h framework.Handle, pod *v1.Pod) ([]map[string]int, []criticalPaths) {
	t.Helper()
	cs := framework.NewCycleState()
	if _, st := pl.PreFilter(cs, framework.NewPodInfo(pod, true), h.Nodes()); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	s, err := getPreFilterState(cs)
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]criticalPaths, len(s.criticalPaths))
	for i, p := range s.criticalPaths {
		paths[i] = *p
	}
	return countMaps(s), paths
}

// TestPreFilterIndexAcrossKeys binds pods one by one and checks that the
// index gives the counts and critical paths of the walk over every node
// for constraints on several keys, where only nodes carrying all keys count.
func TestPreFilterIndexAcrossKeys(t *testing.T) {
	app := map[string]string{"app": "s"}
	var nodes []*v1.Node
	for i := 0; i < 8; i++ {
		lbl := map[string]string{pt.ZoneLabel: fmt.Sprintf("z%d", i%3), "tier": fmt.Sprintf("t%d", i%2)}
		switch i {
		case 6:
			delete(lbl, pt.ZoneLabel)
		case 7:
			lbl[pt.ZoneLabel] = ""
		}
		nodes = append(nodes, pt.Node(fmt.Sprintf("n%d", i), lbl))
	}
	h := &logHandle{Handle: pt.NewHandle(nodes, nil)}
	incremental := New(h)
	pods := map[string]*v1.Pod{
		"zone+hostname": withSpread(pt.Pod(ns, "in", "", app),
			spread(pt.ZoneLabel, 1, v1.DoNotSchedule, app), spread(v1.LabelHostname, 2, v1.DoNotSchedule, app)),
		"tier+zone": withSpread(pt.Pod(ns, "in", "", app),
			spread("tier", 1, v1.DoNotSchedule, app), spread(pt.ZoneLabel, 1, v1.DoNotSchedule, app)),
	}
	check := func(step string) {
		for name, pod := range pods {
			gotM, gotP := preFilterCounts(t, incremental, h, pod)
			wantM, wantP := preFilterCounts(t, New(h.Handle), h.Handle, pod)
			if !reflect.DeepEqual(gotM, wantM) || !reflect.DeepEqual(gotP, wantP) {
				t.Fatalf("%s %s: index %v %v, walk %v %v", step, name, gotM, gotP, wantM, wantP)
			}
		}
	}
	check("empty")
	for i, node := range []string{"n0", "n6", "n7", "n1", "n0", "n4"} {
		h.bind(pt.Pod(ns, fmt.Sprintf("e%d", i), node, app))
		h.bind(pt.Pod(ns, fmt.Sprintf("x%d", i), node, map[string]string{"app": "x"}))
		check(fmt.Sprintf("after bind %d", i))
	}
}
