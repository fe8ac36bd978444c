package helper

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestPodClassIndex(t *testing.T) {
	web := map[string]string{"app": "web"}
	gone := pt.Pod("ns", "gone", "n1", web)
	gone.DeletionTimestamp = &metav1.Time{}
	h := pt.NewHandle([]*v1.Node{pt.Node("n1", nil)},
		[]*v1.Pod{pt.Pod("ns", "a", "n1", web), pt.Pod("ns", "b", "n1", web), pt.Pod("other", "c", "n1", web), gone})
	ni := h.Node("n1")
	x := NewPodClassIndex()
	x.BeginCycle(1)
	sel := labels.SelectorFromSet(web)
	memo := NewClassMemo(x, func(c *PodClass) bool { return c.Namespace == "ns" && !c.Terminating && sel.Matches(c.Labels) })
	count := func() int {
		n := 0
		for _, cc := range x.Counts(ni) {
			if memo.Has(cc.Class) {
				n += int(cc.Count)
			}
		}
		return n
	}
	if got := count(); got != 2 {
		t.Fatalf("count = %d, want 2 (same namespace, not terminating)", got)
	}
	if x.NumClasses() != 3 {
		t.Errorf("classes = %d, want 3 (ns/web, other/web, terminating ns/web)", x.NumClasses())
	}
	// Mutating the NodeInfo bumps its Generation and invalidates the entry.
	ni.AddPod(framework.NewPodInfo(pt.Pod("ns", "d", "n1", web), true))
	if got := count(); got != 3 {
		t.Errorf("count after AddPod = %d, want 3", got)
	}
	ni.RemovePod(pt.Pod("ns", "a", "n1", web))
	ni.RemovePod(pt.Pod("ns", "b", "n1", web))
	if got := count(); got != 1 {
		t.Errorf("count after RemovePod = %d, want 1", got)
	}
	// A clone is its own entry and does not disturb the original's.
	c := ni.Clone()
	c.AddPod(framework.NewPodInfo(pt.Pod("ns", "e", "n1", web), true))
	if got := x.Counts(c); len(got) == 0 || count() != 1 {
		t.Errorf("clone counts %v, original count %d", got, count())
	}
}
