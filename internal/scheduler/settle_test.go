package scheduler

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
	"github.com/berth-sim/berth/internal/sim"
)

// TestSettleTerminates: under the sim loop a pod that never fits is retried
// after other pods bind (backoff) and then stays parked; Settle returns.
func TestSettleTerminates(t *testing.T) {
	big := plugintest.SizedPod("big", "8", "")
	var pods []*v1.Pod
	for _, n := range []string{"a", "b", "c"} {
		pods = append(pods, plugintest.SizedPod(n, "100m", ""))
	}
	s := newState("1.36", []*v1.Node{plugintest.SizedNode("n1", "2", "8Gi", 110)}, append(pods, big)...)
	if err := sim.Settle(s, []sim.Controller{New()}, sim.DefaultSettleHorizon); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Spec.NodeName != "n1" {
			t.Fatalf("%s not scheduled", p.Name)
		}
	}
	q := s.Scheduler.Queue["default/big"]
	if big.Spec.NodeName != "" || q == nil || q.Attempts < 1 || q.Attempts > 2 {
		t.Fatalf("big: node %q queue %+v", big.Spec.NodeName, q)
	}
	if ev := s.EventsFor("Pod", "default", "big"); len(ev) != 1 || ev[0].Count != int32(q.Attempts) {
		t.Fatalf("events %+v", ev)
	}
}
