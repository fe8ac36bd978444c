package tainttoleration

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestFilter(t *testing.T) {
	gpu := v1.Taint{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}
	frontend := v1.Taint{Key: "frontend", Value: "true", Effect: v1.TaintEffectNoExecute}
	soft := v1.Taint{Key: "soft", Value: "x", Effect: v1.TaintEffectPreferNoSchedule}
	tests := []struct {
		name        string
		version     string
		taints      []v1.Taint
		tolerations []v1.Toleration
		wantCode    framework.Code
		wantMsg     string
	}{
		{"no taints", "1.36", nil, nil, framework.Success, ""},
		{"prefer-no-schedule ignored", "1.36", []v1.Taint{soft}, nil, framework.Success, ""},
		{"untolerated 1.36", "1.36", []v1.Taint{gpu}, nil, framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"},
		{"untolerated 1.34.2", "1.34.2", []v1.Taint{gpu}, nil, framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"},
		{"untolerated 1.34.1 names taint", "1.34.1", []v1.Taint{gpu}, nil, framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}"},
		{"untolerated 1.30 NoExecute", "1.30", []v1.Taint{frontend}, nil, framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {frontend: true}"},
		{"first untolerated named", "1.33", []v1.Taint{frontend, gpu}, []v1.Toleration{{Key: "frontend", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}, framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}"},
		{"tolerated with Exists", "1.33", []v1.Taint{frontend}, []v1.Toleration{{Key: "frontend", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}, framework.Success, ""},
		{"tolerated with Equal", "1.36", []v1.Taint{gpu}, []v1.Toleration{{Key: "dedicated", Value: "gpu"}}, framework.Success, ""},
		{"wrong value", "1.36", []v1.Taint{gpu}, []v1.Toleration{{Key: "dedicated", Value: "cpu"}}, framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := plugintest.WithTaints(plugintest.SizedNode("n1", "1", "1Gi", 10), tt.taints...)
			p := plugintest.SizedPod("p", "", "")
			p.Spec.Tolerations = tt.tolerations
			pl := New(plugintest.NewVersionHandle(tt.version, nil)).(*TaintToleration)
			st := pl.Filter(framework.NewCycleState(), framework.NewPodInfo(p, true), framework.NewNodeInfo(n))
			if st.Code() != tt.wantCode || st.Message() != tt.wantMsg {
				t.Fatalf("got %v %q, want %v %q", st.Code(), st.Message(), tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestScore(t *testing.T) {
	soft := func(k string) v1.Taint { return v1.Taint{Key: k, Value: "x", Effect: v1.TaintEffectPreferNoSchedule} }
	tests := []struct {
		name        string
		nodeTaints  [][]v1.Taint
		tolerations []v1.Toleration
		want        []int64
	}{
		{"no taints anywhere", [][]v1.Taint{nil, nil}, nil, []int64{100, 100}},
		{"one soft taint", [][]v1.Taint{nil, {soft("a")}}, nil, []int64{100, 0}},
		{"graded", [][]v1.Taint{nil, {soft("a")}, {soft("a"), soft("b")}}, nil, []int64{100, 50, 0}},
		{"tolerated soft taint", [][]v1.Taint{nil, {soft("a")}}, []v1.Toleration{{Key: "a", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectPreferNoSchedule}}, []int64{100, 100}},
		{"NoSchedule toleration does not count", [][]v1.Taint{nil, {soft("a")}}, []v1.Toleration{{Key: "a", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}, []int64{100, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodes []*v1.Node
			for i, ts := range tt.nodeTaints {
				nodes = append(nodes, plugintest.WithTaints(plugintest.SizedNode(string(rune('a'+i)), "1", "1Gi", 10), ts...))
			}
			nis := plugintest.NodeInfos(plugintest.NewVersionHandle("1.36", nil).Feats, nodes)
			p := plugintest.SizedPod("p", "", "")
			p.Spec.Tolerations = tt.tolerations
			pi := framework.NewPodInfo(p, true)
			pl := New(plugintest.NewVersionHandle("1.36", nis)).(*TaintToleration)
			cs := framework.NewCycleState()
			if st := pl.PreScore(cs, pi, nis); !st.IsSuccess() {
				t.Fatal(st.Message())
			}
			scores := make(framework.NodeScoreList, len(nis))
			for i, ni := range nis {
				s, st := pl.Score(cs, pi, ni)
				if !st.IsSuccess() {
					t.Fatal(st.Message())
				}
				scores[i] = framework.NodeScore{Name: ni.Name(), Score: s}
			}
			pl.ScoreExtensions().NormalizeScore(cs, pi, scores)
			for i := range scores {
				if scores[i].Score != tt.want[i] {
					t.Fatalf("node %d score %d, want %d", i, scores[i].Score, tt.want[i])
				}
			}
		})
	}
}
