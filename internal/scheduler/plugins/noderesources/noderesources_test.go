package noderesources

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestFitFilter(t *testing.T) {
	gpuPod := plugintest.SizedPod("p", "", "")
	gpuPod.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("1")
	tests := []struct {
		name     string
		version  string
		pod      *v1.Pod
		node     *v1.Node
		existing []*v1.Pod
		wantCode framework.Code
		wantMsg  string
	}{
		{name: "fits", version: "1.36", pod: plugintest.SizedPod("p", "1", "1Gi"), node: plugintest.SizedNode("n", "2", "2Gi", 10), wantCode: framework.Success},
		{name: "over allocatable is unresolvable from 1.34", version: "1.36", pod: plugintest.SizedPod("p", "4", ""), node: plugintest.SizedNode("n", "2", "2Gi", 10),
			wantCode: framework.UnschedulableAndUnresolvable, wantMsg: "Insufficient cpu"},
		{name: "over allocatable is unschedulable in 1.33", version: "1.33", pod: plugintest.SizedPod("p", "4", ""), node: plugintest.SizedNode("n", "2", "2Gi", 10),
			wantCode: framework.Unschedulable, wantMsg: "Insufficient cpu"},
		{name: "used up is unschedulable", version: "1.36", pod: plugintest.SizedPod("p", "1", ""), node: plugintest.SizedNode("n", "2", "2Gi", 10),
			existing: []*v1.Pod{plugintest.SizedPod("e", "1500m", "")}, wantCode: framework.Unschedulable, wantMsg: "Insufficient cpu"},
		{name: "all reasons, pods first", version: "1.36", pod: plugintest.SizedPod("p", "1", "2Gi"), node: plugintest.SizedNode("n", "2", "2Gi", 1),
			existing: []*v1.Pod{plugintest.SizedPod("e", "1500m", "1Gi")}, wantCode: framework.Unschedulable, wantMsg: "Too many pods, Insufficient cpu, Insufficient memory"},
		{name: "too many pods for a best-effort pod", version: "1.36", pod: plugintest.SizedPod("p", "", ""), node: plugintest.SizedNode("n", "2", "2Gi", 1),
			existing: []*v1.Pod{plugintest.SizedPod("e", "", "")}, wantCode: framework.Unschedulable, wantMsg: "Too many pods"},
		{name: "extended resource absent on node", version: "1.36", pod: gpuPod, node: plugintest.SizedNode("n", "2", "2Gi", 10),
			wantCode: framework.UnschedulableAndUnresolvable, wantMsg: "Insufficient example.com/gpu"},
		{name: "memory over allocatable 1.34", version: "1.34", pod: plugintest.SizedPod("p", "", "2Gi"), node: plugintest.SizedNode("n", "2", "1Gi", 10),
			wantCode: framework.UnschedulableAndUnresolvable, wantMsg: "Insufficient memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.NewVersionHandle(tt.version, nil)
			for _, e := range tt.existing {
				plugintest.OnNode(e, tt.node.Name)
			}
			ni := plugintest.NodeInfos(h.Feats, []*v1.Node{tt.node}, tt.existing...)[0]
			pl := NewFit(h).(*Fit)
			cs := framework.NewCycleState()
			pi := framework.NewPodInfo(tt.pod, true)
			pl.PreFilter(cs, pi, nil)
			st := pl.Filter(cs, pi, ni)
			if st.Code() != tt.wantCode || st.Message() != tt.wantMsg {
				t.Fatalf("got %v %q, want %v %q", st.Code(), st.Message(), tt.wantCode, tt.wantMsg)
			}
		})
	}
}

// TestScoresWorkedExamples checks worked examples A and D per plugin (upstream's verbose log).
func TestScoresWorkedExamples(t *testing.T) {
	exampleA := func() ([]*v1.Node, []*v1.Pod) {
		return []*v1.Node{plugintest.SizedNode("a", "4", "8Gi", 110), plugintest.SizedNode("b", "4", "8Gi", 110), plugintest.SizedNode("c", "8", "8Gi", 110)},
			[]*v1.Pod{plugintest.OnNode(plugintest.SizedPod("pa", "1", "2Gi"), "a"), plugintest.OnNode(plugintest.SizedPod("pc", "3", "1Gi"), "c")}
	}
	exampleD := func() ([]*v1.Node, []*v1.Pod) {
		return []*v1.Node{plugintest.SizedNode("a", "4", "8Gi", 110), plugintest.SizedNode("b", "4", "8Gi", 110)},
			[]*v1.Pod{plugintest.OnNode(plugintest.SizedPod("e1", "", ""), "a"), plugintest.OnNode(plugintest.SizedPod("e2", "", ""), "a")}
	}
	tests := []struct {
		name         string
		version      string
		cluster      func() ([]*v1.Node, []*v1.Pod)
		pod          *v1.Pod
		wantFit      []int64
		wantBalanced []int64 // nil: skipped
	}{
		{"A 1.36", "1.36", exampleA, plugintest.SizedPod("p", "500m", "1Gi"), []int64{62, 87, 65}, []int64{75, 75, 76}},
		{"A 1.33", "1.33", exampleA, plugintest.SizedPod("p", "500m", "1Gi"), []int64{62, 87, 65}, []int64{100, 100, 90}},
		{"A 1.35", "1.35", exampleA, plugintest.SizedPod("p", "500m", "1Gi"), []int64{62, 87, 65}, []int64{100, 100, 90}},
		{"D best effort", "1.36", exampleD, plugintest.SizedPod("p", "", ""), []int64{92, 97}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.NewVersionHandle(tt.version, nil)
			nodes, pods := tt.cluster()
			nis := plugintest.NodeInfos(h.Feats, nodes, pods...)
			pi := framework.NewPodInfo(tt.pod, true)
			fit := NewFit(h).(*Fit)
			bal := NewBalancedAllocation(h).(*BalancedAllocation)
			cs := framework.NewCycleState()
			balStatus := bal.PreScore(cs, pi, nis)
			if balStatus.IsSkip() != (tt.wantBalanced == nil) {
				t.Fatalf("balanced skip = %v", balStatus.IsSkip())
			}
			for i, ni := range nis {
				if s, _ := fit.Score(cs, pi, ni); s != tt.wantFit[i] {
					t.Errorf("fit %s = %d, want %d", ni.Name(), s, tt.wantFit[i])
				}
				if tt.wantBalanced != nil {
					if s, _ := bal.Score(cs, pi, ni); s != tt.wantBalanced[i] {
						t.Errorf("balanced %s = %d, want %d", ni.Name(), s, tt.wantBalanced[i])
					}
				}
			}
		})
	}
}
