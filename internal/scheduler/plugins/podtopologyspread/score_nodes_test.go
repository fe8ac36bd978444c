package podtopologyspread

import (
	"math/rand"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestScoreNodesOnAnotherList: ScoreNodes copies PreScore's raw scores
// only while the nodes are PreScore's, in its order; a list that differs
// from some point on (reordered, shortened, longer) is scored plainly
// from there, and every score equals the plain computation.
func TestScoreNodesOnAnotherList(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rs-a"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}}
	checked := 0
	for seed := int64(0); seed < 60; seed++ {
		r := rand.New(rand.NewSource(seed))
		nodes, pods := randomCluster(r)
		h := &syncHandle{Handle: pt.NewHandle(nodes, pods), id: 1}
		h.ReplicaSetObjs = []*appsv1.ReplicaSet{rs}
		pl := New(h)
		pod := ownedBy(pt.Pod(ns, "incoming", "", map[string]string{"app": "a"}), "ReplicaSet", "rs-a")
		feasible := h.Nodes()
		skip, want, _ := plainScores(t, pl, h, pod, feasible)
		if skip || len(feasible) < 3 {
			continue
		}
		other := slices.Clone(feasible)
		switch seed % 3 {
		case 0:
			k := 1 + r.Intn(len(other)-1)
			other[k], other[k-1] = other[k-1], other[k]
		case 1:
			other = other[:len(other)-1]
		default:
			other = append(other[1:], other[0])
		}
		cs := framework.NewCycleState()
		pi := framework.NewPodInfo(pod, true)
		if st := pl.PreScore(cs, pi, feasible); !st.IsSuccess() {
			t.Fatalf("seed %d: PreScore %v", seed, st.Message())
		}
		list := make(framework.NodeScoreList, len(other))
		if st := pl.ScoreNodes(cs, pi, other, list); !st.IsSuccess() {
			t.Fatalf("seed %d: ScoreNodes %v", seed, st.Message())
		}
		for i, ni := range other {
			if list[i].Score != want[ni.Node.Name] {
				t.Fatalf("seed %d: %s scored %d, want %d", seed, ni.Node.Name, list[i].Score, want[ni.Node.Name])
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("nothing compared")
	}
}
