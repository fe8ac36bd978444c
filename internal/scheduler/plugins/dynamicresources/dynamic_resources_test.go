package dynamicresources

import (
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestPostFilter(t *testing.T) {
	tests := []struct {
		name         string
		runPreFilter bool
		wantCode     framework.Code
		wantMsg      string
	}{
		{"after PreFilter", true, framework.Unschedulable, "no new claims to deallocate"},
		{"PreFilter never ran", false, framework.Error, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := New(nil).(*DynamicResources)
			cs := framework.NewCycleState()
			pi := framework.NewPodInfo(plugintest.SizedPod("p", "", ""), true)
			if tt.runPreFilter {
				if _, st := pl.PreFilter(cs, pi, nil); !st.IsSkip() {
					t.Fatalf("PreFilter = %v, want Skip", st.Code())
				}
			}
			_, st := pl.PostFilter(cs, pi, framework.NodeToStatus{})
			if st.Code() != tt.wantCode || st.Message() != tt.wantMsg {
				t.Fatalf("got %v %q", st.Code(), st.Message())
			}
			if s, _ := pl.Score(cs, pi, nil); s != 0 {
				t.Fatalf("score %d", s)
			}
		})
	}
}
