package noderesources

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestFitScoreIgnoresIncomingPodLevelRequests: upstream's LeastAllocated
// scorer sees the incoming pod's container requests even when pod-level
// requests are set (found by the differential test, seed 0), while Filter
// and the bound pods use the pod-level ones.
func TestFitScoreIgnoresIncomingPodLevelRequests(t *testing.T) {
	podLevel := func(name, cpu, mem string) *v1.Pod {
		p := plugintest.SizedPod(name, "120m", "342Mi")
		p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}}
		return p
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing []*v1.Pod
		want     int64
	}{
		// 16 cpu / 16Gi node, 50m + 436Mi bound: (98 + 95) / 2 with 120m + 342Mi.
		{"pod-level incoming", podLevel("p", "1", "1Gi"), []*v1.Pod{plugintest.SizedPod("e", "50m", "436Mi")}, 96},
		{"containers only", plugintest.SizedPod("p", "120m", "342Mi"), []*v1.Pod{plugintest.SizedPod("e", "50m", "436Mi")}, 96},
		// A bound pod's pod-level requests do count: (74 + 72) / 2 with 4 cpu + 4Gi bound.
		{"pod-level bound", plugintest.SizedPod("p", "120m", "342Mi"), []*v1.Pod{podLevel("e", "4", "4Gi")}, 73},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.NewVersionHandle("1.36", nil)
			var bound []*v1.Pod
			for _, e := range tt.existing {
				bound = append(bound, plugintest.OnNode(e, "n"))
			}
			nis := plugintest.NodeInfos(h.Feats, []*v1.Node{plugintest.SizedNode("n", "16", "16Gi", 110)}, bound...)
			pi := framework.NewPodInfo(tt.pod, true)
			fit := NewFit(h).(*Fit)
			cs := framework.NewCycleState()
			fit.PreFilter(cs, pi, nis)
			if got, _ := fit.Score(cs, pi, nis[0]); got != tt.want {
				t.Errorf("score %d, want %d", got, tt.want)
			}
			// Without PreFilter state the result is the same.
			if got, _ := fit.Score(framework.NewCycleState(), pi, nis[0]); got != tt.want {
				t.Errorf("score without state %d, want %d", got, tt.want)
			}
			// Filter still uses the pod-level request.
			if tt.pod.Spec.Resources != nil && pi.Requests.MilliCPU != 1000 {
				t.Errorf("filter request %d mCPU, want 1000", pi.Requests.MilliCPU)
			}
		})
	}
}
