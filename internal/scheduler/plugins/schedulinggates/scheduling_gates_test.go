package schedulinggates

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestPreEnqueue(t *testing.T) {
	tests := []struct {
		name  string
		gates []v1.PodSchedulingGate
		want  framework.Code
		msg   string
	}{
		{"no gates", nil, framework.Success, ""},
		{"gated", []v1.PodSchedulingGate{{Name: "a"}, {Name: "b"}}, framework.UnschedulableAndUnresolvable, "waiting for scheduling gates: [a b]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugintest.SizedPod("p", "", "")
			p.Spec.SchedulingGates = tt.gates
			st := New(nil).(*SchedulingGates).PreEnqueue(p)
			if st.Code() != tt.want || st.Message() != tt.msg {
				t.Fatalf("got %v %q", st.Code(), st.Message())
			}
		})
	}
}
