package tainttoleration

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestTaintClassesMatchPerNode checks the per-taint-list answers against
// the plugin without a table (every node read on its own) for random
// taints and tolerations, pods interleaved, on listed nodes and on copies
// whose Index does not lead to them, in both reason texts.
func TestTaintClassesMatchPerNode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	keys := []string{"gpu", "spot", "dedicated"}
	effects := []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectNoExecute, v1.TaintEffectPreferNoSchedule}
	taint := func() v1.Taint {
		return v1.Taint{Key: keys[r.IntN(3)], Value: []string{"", "a", "b"}[r.IntN(3)], Effect: effects[r.IntN(3)]}
	}
	var nodes []*v1.Node
	for i := 0; i < 60; i++ {
		n := plugintest.SizedNode(fmt.Sprintf("n%d", i), "1", "1Gi", 10)
		for j := r.IntN(4) - 1; j > 0; j-- {
			n.Spec.Taints = append(n.Spec.Taints, taint())
		}
		nodes = append(nodes, n)
	}
	toleration := func() v1.Toleration {
		tol := v1.Toleration{Key: keys[r.IntN(3)], Operator: v1.TolerationOpEqual, Value: []string{"", "a", "b"}[r.IntN(3)]}
		if r.IntN(3) == 0 {
			tol.Operator, tol.Value = v1.TolerationOpExists, ""
		}
		if r.IntN(2) == 0 {
			tol.Effect = effects[r.IntN(3)]
		}
		if r.IntN(10) == 0 {
			tol = v1.Toleration{Operator: v1.TolerationOpExists}
		}
		return tol
	}
	var pods []*framework.PodInfo
	for i := 0; i < 40; i++ {
		p := plugintest.SizedPod(fmt.Sprintf("p%d", i), "", "")
		for j := r.IntN(4); j > 0; j-- {
			p.Spec.Tolerations = append(p.Spec.Tolerations, toleration())
		}
		pods = append(pods, framework.NewPodInfo(p, true))
	}
	// Pods of one template: other objects, equal tolerations (they share
	// a memo), and one whose tolerations differ only in a value.
	for i := 0; i < 10; i++ {
		p := plugintest.SizedPod(fmt.Sprintf("copy%d", i), "", "")
		p.Spec.Tolerations = append([]v1.Toleration(nil), pods[i].Pod.Spec.Tolerations...)
		if i == 9 && len(p.Spec.Tolerations) > 0 {
			p.Spec.Tolerations[0].Value += "x"
		}
		pods = append(pods, framework.NewPodInfo(p, true))
	}
	for _, version := range []string{"1.33", "1.36"} {
		h := plugintest.NewHandle(nodes, nil)
		h.Feats = plugintest.NewVersionHandle(version, nil).Feats
		tabled := New(h).(*TaintToleration)
		plain := New(plugintest.NewVersionHandle(version, nil)).(*TaintToleration)
		var copies []*framework.NodeInfo
		for i, ni := range h.NodeInfos {
			c := framework.NewNodeInfo(ni.Node)
			c.Index = int32((i + 7) % len(nodes))
			copies = append(copies, c)
		}
		classed := 0
		for round := 0; round < 300; round++ {
			pi := pods[r.IntN(len(pods))]
			cs, ref := framework.NewCycleState(), framework.NewCycleState()
			tabled.PreScore(cs, pi, h.NodeInfos)
			plain.PreScore(ref, pi, h.NodeInfos)
			for _, list := range [][]*framework.NodeInfo{h.NodeInfos, copies} {
				for _, ni := range list {
					if tabled.tbl.class(ni) > 0 {
						classed++
					}
					got, want := tabled.Filter(cs, pi, ni), plain.Filter(ref, pi, ni)
					if got.Code() != want.Code() || got.Message() != want.Message() {
						t.Fatalf("%s round %d node %s: Filter %v %q, per node %v %q", version, round, ni.Name(), got.Code(), got.Message(), want.Code(), want.Message())
					}
					gs, _ := tabled.Score(cs, pi, ni)
					ws, _ := plain.Score(ref, pi, ni)
					if gs != ws {
						t.Fatalf("%s round %d node %s: Score %d, per node %d", version, round, ni.Name(), gs, ws)
					}
				}
			}
		}
		if classed == 0 {
			t.Fatal("no node was answered by taint class")
		}
	}
}

// BenchmarkFilterScore is one pod's Filter and Score over 5,000 nodes in
// 20 taint lists, answered per taint list (tabled) or per node.
func BenchmarkFilterScore(b *testing.B) {
	var nodes []*v1.Node
	for i := 0; i < 5000; i++ {
		n := plugintest.SizedNode(fmt.Sprintf("n%d", i), "1", "1Gi", 10)
		if i%4 > 0 {
			n.Spec.Taints = []v1.Taint{{Key: fmt.Sprint("k", i%20), Effect: []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule}[i%2]}}
		}
		nodes = append(nodes, n)
	}
	p := plugintest.SizedPod("p", "", "")
	p.Spec.Tolerations = []v1.Toleration{{Key: "k3", Operator: v1.TolerationOpExists}, {Key: "k8", Operator: v1.TolerationOpExists}}
	pi := framework.NewPodInfo(p, true)
	for _, tabled := range []bool{false, true} {
		b.Run(fmt.Sprintf("tabled=%v", tabled), func(b *testing.B) {
			h := plugintest.NewHandle(nodes, nil)
			var pl *TaintToleration
			if tabled {
				pl = New(h).(*TaintToleration)
			} else {
				pl = New(plugintest.NewVersionHandle("1.36", nil)).(*TaintToleration)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				cs := framework.NewCycleState()
				pl.PreScore(cs, pi, h.NodeInfos)
				pl.memo, pl.memos = nil, nil
				for _, ni := range h.NodeInfos {
					if pl.Filter(cs, pi, ni).IsSuccess() {
						pl.Score(cs, pi, ni)
					}
				}
			}
		})
	}
}

// TestFirstUntoleratedMatchesHelper checks the copy-free search against
// component-helpers' FindMatchingUntoleratedTaint with the scheduler's
// NoSchedule/NoExecute filter, for random taint lists and tolerations
// (operators, effects, values, empty keys).
func TestFirstUntoleratedMatchesHelper(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	keys := []string{"gpu", "spot", ""}
	effects := []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectNoExecute, v1.TaintEffectPreferNoSchedule, ""}
	for round := 0; round < 20000; round++ {
		var taints []v1.Taint
		for j := r.IntN(5); j > 0; j-- {
			taints = append(taints, v1.Taint{Key: keys[r.IntN(2)], Value: []string{"", "a", "b"}[r.IntN(3)], Effect: effects[r.IntN(3)]})
		}
		var tols []v1.Toleration
		for j := r.IntN(4); j > 0; j-- {
			tol := v1.Toleration{Key: keys[r.IntN(3)], Operator: []v1.TolerationOperator{v1.TolerationOpEqual, v1.TolerationOpExists, ""}[r.IntN(3)],
				Value: []string{"", "a", "b"}[r.IntN(3)], Effect: effects[r.IntN(4)]}
			tols = append(tols, tol)
		}
		want, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), taints, tols, helper.DoNotScheduleTaints, false)
		got := firstUntolerated(taints, tols)
		if (got != nil) != untolerated || (got != nil && *got != want) {
			t.Fatalf("round %d taints %v tolerations %v: got %v, helper %v %v", round, taints, tols, got, want, untolerated)
		}
	}
}
