package nodeaffinity

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// TestMemoMatchesSelector checks the memoised verdicts against the
// component-helpers matcher for random selectors and nodes, one state
// reused over all nodes as in a scheduling cycle.
func TestMemoMatchesSelector(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	keys := []string{"tier", "zone", "gen", v1.LabelHostname}
	ops := []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
		v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt}
	value := func() string { return fmt.Sprint(r.IntN(4)) }
	var nodes []*v1.Node
	for i := 0; i < 60; i++ {
		lbl := map[string]string{v1.LabelHostname: fmt.Sprintf("n%d", i)}
		for _, k := range keys[:3] {
			if r.IntN(4) > 0 {
				lbl[k] = value()
			}
		}
		if r.IntN(10) == 0 {
			lbl["gen"] = "x" // not an integer: Gt/Lt must not match
		}
		nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Labels: lbl}})
	}
	memoised := 0
	for round := 0; round < 300; round++ {
		pod := &v1.Pod{}
		if r.IntN(3) == 0 {
			pod.Spec.NodeSelector = map[string]string{keys[r.IntN(3)]: value()}
		}
		if r.IntN(4) > 0 {
			sel := &v1.NodeSelector{}
			for i := r.IntN(3); i >= 0; i-- {
				var term v1.NodeSelectorTerm
				for j := r.IntN(3); j > 0; j-- {
					req := v1.NodeSelectorRequirement{Key: keys[r.IntN(len(keys))], Operator: ops[r.IntN(len(ops))]}
					switch req.Operator {
					case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
						req.Values = []string{value(), value()}
					case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
						req.Values = []string{value()}
					}
					term.MatchExpressions = append(term.MatchExpressions, req)
				}
				if r.IntN(8) == 0 {
					term.MatchFields = []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpNotIn, Values: []string{"n3"}}}
				}
				sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, term)
			}
			pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}
		}
		s := newPreFilterState(pod)
		if s.memo != nil {
			memoised++
		}
		want := nodeaffinity.GetRequiredNodeAffinity(pod)
		for pass := 0; pass < 2; pass++ {
			for _, n := range nodes {
				w, _ := want.Match(n)
				if got := s.match(n); got != w {
					t.Fatalf("round %d node %s: memo %v, matcher %v (pod %+v)", round, n.Name, got, w, pod.Spec)
				}
			}
		}
	}
	if memoised == 0 {
		t.Fatal("no selector was memoised")
	}
}
