package podtopologyspread

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// BenchmarkCycle runs one scheduling cycle's worth of this plugin for a pod
// with a zone spread constraint on 5,000 nodes holding 10,000 pods: PreFilter,
// Filter on the 500 nodes upstream would examine, PreScore and Score on them.
func BenchmarkCycle(b *testing.B) {
	pt.BenchCycle(b, func(h framework.Handle) pt.CyclePlugin { return New(h) })
}

// BenchmarkPreScoreDefaults is PreScore and ScoreNodes under the system
// default constraints (hostname and zone) for a ReplicaSet's pod on 500
// feasible nodes of 5,000 holding 10,000 of its pods, the start moving
// as in findFeasible.
func BenchmarkPreScoreDefaults(b *testing.B) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rs-a"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}}
	var nodes []*v1.Node
	for i := 0; i < 5000; i++ {
		nodes = append(nodes, pt.Node(fmt.Sprintf("node-%05d", i), map[string]string{pt.ZoneLabel: fmt.Sprintf("zone-%d", i%3)}))
	}
	var pods []*v1.Pod
	for i := 0; i < 10000; i++ {
		pods = append(pods, ownedBy(pt.Pod(ns, fmt.Sprintf("p-%05d", i), nodes[(i*7919)%5000].Name, map[string]string{"app": "a"}), "ReplicaSet", "rs-a"))
	}
	h := &syncHandle{Handle: pt.NewHandle(nodes, pods), id: 1}
	h.ReplicaSetObjs = []*appsv1.ReplicaSet{rs}
	pl := New(h)
	pi := framework.NewPodInfo(ownedBy(pt.Pod(ns, "incoming", "", map[string]string{"app": "a"}), "ReplicaSet", "rs-a"), true)
	all := h.Nodes()
	scores := make(framework.NodeScoreList, 500)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		start := (i * 500) % len(all)
		feasible := all[start : start+500]
		cs := framework.NewCycleState()
		if st := pl.PreScore(cs, pi, feasible); !st.IsSuccess() {
			b.Fatal(st.Message())
		}
		if st := pl.ScoreNodes(cs, pi, feasible, scores); !st.IsSuccess() {
			b.Fatal(st.Message())
		}
	}
}
