package defaultpreemption

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/noderesources"
	"github.com/berth-sim/berth/internal/scheduler/schedtest"
)

// fitRunner runs only NodeResourcesFit, enough to judge cpu preemption.
type fitRunner struct {
	*schedtest.Handle
	fit framework.FilterPlugin
}

func (r *fitRunner) RunFilterPlugins(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return r.fit.Filter(state, pod, ni)
}

func (r *fitRunner) RunPreFilterExtensionRemovePod(*framework.CycleState, *framework.PodInfo, *framework.PodInfo, *framework.NodeInfo) *framework.Status {
	return nil
}

func TestPostFilter(t *testing.T) {
	never := v1.PreemptNever
	tests := []struct {
		name     string
		version  string
		nodes    []*v1.Node
		existing []*v1.Pod
		pod      *v1.Pod
		policy   *v1.PreemptionPolicy
		statuses map[string]framework.Code // filter verdicts; missing nodes U&U
		wantCode framework.Code
		wantMsg  string
	}{
		{
			name: "preemptionPolicy Never", version: "1.36", nodes: []*v1.Node{schedtest.Node("n1", "1", "1Gi", 10)},
			pod: schedtest.Pod("p", "2", ""), policy: &never, statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Unschedulable, wantMsg: "preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name: "no lower-priority pods", version: "1.36", nodes: []*v1.Node{schedtest.Node("n1", "2", "1Gi", 10), schedtest.Node("n2", "2", "1Gi", 10)},
			existing: []*v1.Pod{schedtest.OnNode(schedtest.Pod("e1", "1500m", ""), "n1")},
			pod:      schedtest.Pod("p", "1", ""), statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Unschedulable, wantMsg: "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
		},
		{
			name: "still does not fit after removing victims", version: "1.36", nodes: []*v1.Node{schedtest.Node("n1", "2", "1Gi", 10)},
			existing: []*v1.Pod{schedtest.OnNode(schedtest.WithPriority(schedtest.Pod("lo", "500m", ""), 1), "n1"), schedtest.OnNode(schedtest.WithPriority(schedtest.Pod("hi", "1500m", ""), 100), "n1")},
			pod:      schedtest.WithPriority(schedtest.Pod("p", "1", ""), 10), statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Unschedulable, wantMsg: "preemption: 0/1 nodes are available: 1 Insufficient cpu.",
		},
		{
			name: "preemption would help", version: "1.36", nodes: []*v1.Node{schedtest.Node("n1", "2", "1Gi", 10)},
			existing: []*v1.Pod{schedtest.OnNode(schedtest.WithPriority(schedtest.Pod("lo", "1500m", ""), 1), "n1")},
			pod:      schedtest.WithPriority(schedtest.Pod("p", "1", ""), 10), statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Success, wantMsg: "",
		},
		{
			name: "equal priority is no victim", version: "1.36", nodes: []*v1.Node{schedtest.Node("n1", "2", "1Gi", 10)},
			existing: []*v1.Pod{schedtest.OnNode(schedtest.WithPriority(schedtest.Pod("eq", "1500m", ""), 10), "n1")},
			pod:      schedtest.WithPriority(schedtest.Pod("p", "1", ""), 10), statuses: map[string]framework.Code{"n1": framework.Unschedulable},
			wantCode: framework.Unschedulable, wantMsg: "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := schedtest.NewHandle(tt.version, nil)
			h.NodeInfos = schedtest.NodeInfos(h.Feats, tt.nodes, tt.existing...)
			r := &fitRunner{Handle: h, fit: noderesources.NewFit(h).(framework.FilterPlugin)}
			pl := New(r).(*DefaultPreemption)
			tt.pod.Spec.PreemptionPolicy = tt.policy
			filtered := framework.NodeToStatus{Statuses: map[string]*framework.Status{},
				Absent: framework.NewStatus(framework.UnschedulableAndUnresolvable, "x")}
			for n, c := range tt.statuses {
				filtered.Statuses[n] = framework.NewStatus(c, "Insufficient cpu")
			}
			_, st := pl.PostFilter(framework.NewCycleState(), framework.NewPodInfo(tt.pod, true), filtered)
			if st.Code() != tt.wantCode || st.Message() != tt.wantMsg {
				t.Fatalf("got %v %q\nwant %v %q", st.Code(), st.Message(), tt.wantCode, tt.wantMsg)
			}
		})
	}
}
