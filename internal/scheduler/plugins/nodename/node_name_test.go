package nodename

import (
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name     string
		nodeName string
		want     framework.Code
	}{
		{"no node name", "", framework.Success},
		{"same node", "n1", framework.Success},
		{"other node", "n2", framework.UnschedulableAndUnresolvable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugintest.SizedPod("p", "", "")
			p.Spec.NodeName = tt.nodeName
			st := New(nil).(framework.FilterPlugin).Filter(nil, framework.NewPodInfo(p, true), framework.NewNodeInfo(plugintest.SizedNode("n1", "1", "1Gi", 10)))
			if st.Code() != tt.want {
				t.Fatalf("code = %v, want %v", st.Code(), tt.want)
			}
			if tt.want != framework.Success && st.Message() != ErrReason {
				t.Fatalf("message = %q", st.Message())
			}
		})
	}
}
