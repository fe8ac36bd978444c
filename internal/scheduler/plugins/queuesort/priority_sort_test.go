package queuesort

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

func TestLess(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Second)
	tests := []struct {
		name   string
		p1, p2 int32
		ts1    time.Time
		ts2    time.Time
		want   bool
	}{
		{"higher priority first", 10, 0, t1, t0, true},
		{"lower priority later", 0, 10, t0, t1, false},
		{"equal priority, older first", 5, 5, t0, t1, true},
		{"equal priority, newer later", 5, 5, t1, t0, false},
		{"equal everything", 5, 5, t0, t0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := plugintest.WithPriority(plugintest.SizedPod("a", "", ""), tt.p1)
			b := plugintest.WithPriority(plugintest.SizedPod("b", "", ""), tt.p2)
			if got := (&PrioritySort{}).Less(a, tt.ts1, b, tt.ts2); got != tt.want {
				t.Fatalf("Less = %v", got)
			}
		})
	}
	// nil priority counts as 0.
	a := plugintest.SizedPod("a", "", "")
	b := plugintest.WithPriority(plugintest.SizedPod("b", "", ""), 1)
	if (&PrioritySort{}).Less(a, t0, b, t1) {
		t.Fatal("nil priority sorted before priority 1")
	}
}
