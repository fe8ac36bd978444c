package interpodaffinity

import (
	"fmt"
	"reflect"
	"testing"

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

func (h *logHandle) AddedPods() (uint64, []helper.AddedPod) { return 7, h.added }

func (h *logHandle) bind(p *v1.Pod) {
	pi := framework.NewPodInfo(p, true)
	ni := h.Node(p.Spec.NodeName)
	ni.AddPod(pi)
	h.added = append(h.added, helper.AddedPod{Node: ni, Pod: pi})
	h.Refresh()
}

// TestIndexFollowsBoundPods binds pods one by one and checks that the
// plugin reusing its index across cycles gives the verdicts of a plugin
// that recounts everything (plugintest's handle keeps no log).
func TestIndexFollowsBoundPods(t *testing.T) {
	var nodes []*v1.Node
	for i := 0; i < 6; i++ {
		nodes = append(nodes, pt.Node(fmt.Sprintf("n%d", i), map[string]string{pt.ZoneLabel: fmt.Sprintf("z%d", i%2)}))
	}
	h := &logHandle{Handle: pt.NewHandle(nodes, nil)}
	incremental := New(h)
	incoming := []*v1.Pod{
		withAffinity(pt.Pod(ns, "anti", "", web), antiAffinity(pt.Term(v1.LabelHostname, web))),
		withAffinity(pt.Pod(ns, "aff", "", db), affinity(pt.Term(pt.ZoneLabel, web))),
		pt.Pod(ns, "plain", "", web),
	}
	check := func(step string) {
		for _, p := range incoming {
			_, got := pt.RunFilter(incremental, h.Handle, p)
			_, want := pt.RunFilter(New(h.Handle), h.Handle, p)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, pod %s: incremental %v, fresh %v", step, p.Name, got, want)
			}
		}
	}
	check("empty")
	for i, p := range []*v1.Pod{
		withAffinity(pt.Pod(ns, "e0", "n0", web), antiAffinity(pt.Term(v1.LabelHostname, web))),
		pt.Pod(ns, "e1", "n3", web),
		withAffinity(pt.Pod(ns, "e2", "n4", db), antiAffinity(pt.Term(pt.ZoneLabel, db))),
	} {
		h.bind(p)
		check(fmt.Sprintf("after bind %d", i))
	}
	// The index really changed the outcome: n0 now holds a web pod.
	_, v := pt.RunFilter(incremental, h.Handle, incoming[0])
	if v["n0"] == pass {
		t.Fatalf("n0 should reject the anti pod after binds, got %v", v)
	}
}
