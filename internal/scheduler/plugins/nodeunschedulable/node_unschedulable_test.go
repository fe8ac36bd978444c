package nodeunschedulable

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name        string
		cordoned    bool
		tolerations []v1.Toleration
		want        framework.Code
	}{
		{"schedulable node", false, nil, framework.Success},
		{"cordoned node", true, nil, framework.UnschedulableAndUnresolvable},
		{"cordoned node, pod tolerates", true, []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}, framework.Success},
		{"cordoned node, wrong effect tolerated", true, []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}, framework.UnschedulableAndUnresolvable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := plugintest.SizedNode("n1", "1", "1Gi", 10)
			n.Spec.Unschedulable = tt.cordoned
			p := plugintest.SizedPod("p", "", "")
			p.Spec.Tolerations = tt.tolerations
			st := New(nil).(framework.FilterPlugin).Filter(framework.NewCycleState(), framework.NewPodInfo(p, true), framework.NewNodeInfo(n))
			if st.Code() != tt.want {
				t.Fatalf("code = %v, want %v", st.Code(), tt.want)
			}
			if tt.want != framework.Success && st.Message() != ErrReasonUnschedulable {
				t.Fatalf("message = %q", st.Message())
			}
		})
	}
}
