package nodeaffinity

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// randomSelection draws selectors over a few keys and values, with the
// shapes the helper treats specially: invalid operators and values,
// non-integer Gt/Lt, matchFields on other keys or with several values,
// empty terms, hostname keys.
type randomSelection struct {
	r *rand.Rand
}

var (
	randKeys   = []string{"tier", "zone", "gen", v1.LabelHostname, "bad key!"}
	fieldKeys  = []string{metav1.ObjectNameField, metav1.ObjectNameField, metav1.ObjectNameField, "metadata.namespace"}
	randLabels = []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
		v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt, "Bogus"}
	randFieldOps = []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists}
)

func (g randomSelection) value() string {
	switch g.r.IntN(12) {
	case 0:
		return "x"
	case 1:
		return "-bad value-"
	case 2:
		return ""
	}
	return fmt.Sprint(g.r.IntN(4))
}

func (g randomSelection) nodeName() string {
	if g.r.IntN(8) == 0 {
		return "absent"
	}
	return fmt.Sprintf("n%d", g.r.IntN(40))
}

func (g randomSelection) term() v1.NodeSelectorTerm {
	var term v1.NodeSelectorTerm
	for j := g.r.IntN(3); j > 0; j-- {
		req := v1.NodeSelectorRequirement{Key: randKeys[g.r.IntN(len(randKeys))], Operator: randLabels[g.r.IntN(len(randLabels))]}
		for k := g.r.IntN(3); k > 0; k-- {
			req.Values = append(req.Values, g.value())
		}
		if req.Key == v1.LabelHostname && len(req.Values) > 0 {
			req.Values[0] = g.nodeName()
		}
		term.MatchExpressions = append(term.MatchExpressions, req)
	}
	for j := g.r.IntN(3) - 1; j > 0; j-- {
		req := v1.NodeSelectorRequirement{Key: fieldKeys[g.r.IntN(len(fieldKeys))], Operator: randFieldOps[g.r.IntN(len(randFieldOps))]}
		for k := g.r.IntN(4); k > 0; k-- {
			req.Values = append(req.Values, g.nodeName())
		}
		if g.r.IntN(10) == 0 && len(req.Values) > 0 {
			req.Values[0] = ""
		}
		term.MatchFields = append(term.MatchFields, req)
	}
	return term
}

func (g randomSelection) pod() *v1.Pod {
	pod := &v1.Pod{}
	if g.r.IntN(3) == 0 {
		pod.Spec.NodeSelector = map[string]string{}
		for i := g.r.IntN(2); i >= 0; i-- {
			pod.Spec.NodeSelector[randKeys[g.r.IntN(4)]] = g.value()
		}
	}
	na := &v1.NodeAffinity{}
	if g.r.IntN(4) > 0 {
		sel := &v1.NodeSelector{}
		for i := g.r.IntN(4); i > 0; i-- {
			sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, g.term())
		}
		na.RequiredDuringSchedulingIgnoredDuringExecution = sel
	}
	for i := g.r.IntN(4); i > 0; i-- {
		na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
			v1.PreferredSchedulingTerm{Weight: int32(g.r.IntN(5)), Preference: g.term()})
	}
	pod.Spec.Affinity = &v1.Affinity{NodeAffinity: na}
	return pod
}

func randomNodes(g randomSelection, n int) []*v1.Node {
	var nodes []*v1.Node
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("n%d", i)
		lbl := map[string]string{v1.LabelHostname: name}
		for _, k := range randKeys[:3] {
			if g.r.IntN(4) > 0 {
				lbl[k] = g.value()
			}
		}
		nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl}})
	}
	return nodes
}

// TestCompiledMatchesHelper checks the compiled selectors against the
// component-helpers matcher and scorer for random selectors and nodes: one
// cycle state reused over every node twice (so cached verdicts are read
// back), plus copies whose Index does not lead to them (helper path).
func TestCompiledMatchesHelper(t *testing.T) {
	g := randomSelection{r: rand.New(rand.NewPCG(5, 6))}
	h := plugintest.NewHandle(randomNodes(g, 40), nil)
	pl := New(h).(*NodeAffinity)
	copies := make([]*framework.NodeInfo, 0, len(h.NodeInfos))
	for i, ni := range h.NodeInfos {
		c := framework.NewNodeInfo(ni.Node)
		c.Index = int32((i + 1) % len(h.NodeInfos))
		copies = append(copies, c)
	}
	compiled, scored := 0, 0
	for round := 0; round < 2000; round++ {
		pod := g.pod()
		pi := framework.NewPodInfo(pod, true)
		cs := framework.NewCycleState()
		_, st := pl.PreFilter(cs, pi, h.NodeInfos)
		want := nodeaffinity.GetRequiredNodeAffinity(pod)
		if s, ok := cs.Read(preFilterStateKey).(*preFilterState); ok && s.fast != nil {
			compiled++
		}
		preferred, perr := nodeaffinity.NewPreferredSchedulingTerms(pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		pst := pl.PreScore(cs, pi, h.NodeInfos)
		if (perr != nil) != (pst.Code() == framework.Error) {
			t.Fatalf("round %d: PreScore %v, helper error %v", round, pst, perr)
		}
		if s, ok := cs.Read(preScoreStateKey).(*preScoreState); ok && s.fast != nil && pst.IsSuccess() {
			scored++
		}
		for pass := 0; pass < 2; pass++ {
			for _, list := range [][]*framework.NodeInfo{h.NodeInfos, copies} {
				for _, ni := range list {
					if !st.IsSkip() {
						w, _ := want.Match(ni.Node)
						if got := pl.Filter(cs, pi, ni).IsSuccess(); got != w {
							t.Fatalf("round %d node %s: Filter %v, helper %v (pod %+v)", round, ni.Name(), got, w, pod.Spec)
						}
					}
					if pst.IsSuccess() {
						got, _ := pl.Score(cs, pi, ni)
						if w := preferred.Score(ni.Node); got != w {
							t.Fatalf("round %d node %s: Score %d, helper %d (pod %+v)", round, ni.Name(), got, w, pod.Spec)
						}
					}
				}
			}
		}
	}
	if compiled < 1000 || scored < 100 {
		t.Fatalf("too few compiled selectors: %d required, %d preferred", compiled, scored)
	}
}

// BenchmarkFilter compares the compiled selector with the helper's matcher
// on a pod whose terms mix labels and matchFields, over 5,000 nodes.
func BenchmarkFilter(b *testing.B) {
	g := randomSelection{r: rand.New(rand.NewPCG(1, 2))}
	nodes := randomNodes(g, 5000)
	pod := &v1.Pod{Spec: v1.PodSpec{NodeSelector: map[string]string{"tier": "1"}, Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
			{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpNotIn, Values: []string{"n7"}}}},
			{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "gen", Operator: v1.NodeSelectorOpGt, Values: []string{"1"}}}},
		}},
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
			{Weight: 3, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"1", "2"}}}}},
		},
	}}}}
	pi := framework.NewPodInfo(pod, true)
	for _, tabled := range []bool{false, true} {
		b.Run(fmt.Sprintf("tabled=%v", tabled), func(b *testing.B) {
			h := plugintest.NewHandle(nodes, nil)
			var fh framework.Handle
			if tabled {
				fh = h
			}
			pl := New(fh).(*NodeAffinity)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				cs := framework.NewCycleState()
				pl.PreFilter(cs, pi, h.NodeInfos)
				pl.PreScore(cs, pi, h.NodeInfos)
				for _, ni := range h.NodeInfos {
					if pl.Filter(cs, pi, ni).IsSuccess() {
						pl.Score(cs, pi, ni)
					}
				}
			}
		})
	}
}

// TestExportedRequiredMatchesHelper checks the API PodTopologySpread's
// inclusion policies read (export.go) against the helper's matcher, node
// by node twice (cached verdicts read back), for random selectors.
func TestExportedRequiredMatchesHelper(t *testing.T) {
	g := randomSelection{r: rand.New(rand.NewPCG(7, 8))}
	h := plugintest.NewHandle(randomNodes(g, 40), nil)
	tbl := NewTable(h.NodeInfos)
	if tbl == nil || !tbl.Same(h.NodeInfos) || tbl.Same(h.NodeInfos[:len(h.NodeInfos)-1]) {
		t.Fatal("table not built over, or not recognizing, its list")
	}
	compiled := 0
	for round := 0; round < 1000; round++ {
		pod := g.pod()
		r := tbl.CompileRequired(pod)
		if r == nil {
			continue
		}
		compiled++
		want := nodeaffinity.GetRequiredNodeAffinity(pod)
		for pass := 0; pass < 2; pass++ {
			for p, ni := range h.NodeInfos {
				w, _ := want.Match(ni.Node)
				if got := r.Match(int32(p)); got != w {
					t.Fatalf("round %d node %s: compiled %v, helper %v (pod %+v)", round, ni.Name(), got, w, pod.Spec)
				}
			}
		}
	}
	if compiled < 500 {
		t.Fatalf("only %d pods compiled", compiled)
	}
	dup := plugintest.NewHandle(append(randomNodes(g, 3), randomNodes(g, 1)...), nil)
	if NewTable(dup.NodeInfos) != nil {
		t.Fatal("a list with a repeated name must not give a table")
	}
}
