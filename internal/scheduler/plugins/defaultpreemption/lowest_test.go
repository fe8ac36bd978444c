package defaultpreemption

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// logRunner is fitRunner with the scheduler's pod log, which turns on the
// summary of dry runs that cannot find victims.
type logRunner struct {
	*fitRunner
	added []helper.AddedPod
}

func (r *logRunner) AddedPods() (uint64, []helper.AddedPod) { return 1, r.added }

// TestSummaryMatchesDryRun compares PostFilter with the pod log (summary
// when no pod has a lower priority) against the full dry run, as pods of
// mixed priorities bind: same message, same random draws, and the summary
// really taken when it applies.
func TestSummaryMatchesDryRun(t *testing.T) {
	var nodes []*v1.Node
	for i := 0; i < 120; i++ {
		nodes = append(nodes, plugintest.SizedNode(fmt.Sprintf("n%03d", i), "1", "1Gi", 10))
	}
	full := newRunner(nodes)
	logged := &logRunner{fitRunner: newRunner(nodes)}
	slow, fast := New(full).(*DefaultPreemption), New(logged).(*DefaultPreemption)
	summarised := 0
	for step := 0; step < 8; step++ {
		for _, prio := range []int32{0, 5, 10} {
			pod := framework.NewPodInfo(prioPod("p", "2", prio, ""), true)
			filtered := framework.NodeToStatus{Statuses: map[string]*framework.Status{}}
			for i, ni := range full.NodeInfos {
				code := framework.Unschedulable
				if i%7 == 0 {
					code = framework.UnschedulableAndUnresolvable
				}
				filtered.Statuses[ni.Name()] = framework.NewStatus(code, "Insufficient cpu")
			}
			_, want := slow.PostFilter(framework.NewCycleState(), pod, filtered)
			_, got := fast.PostFilter(framework.NewCycleState(), pod, filtered)
			if got.Code() != want.Code() || got.Message() != want.Message() {
				t.Fatalf("step %d prio %d: summary %v %q, dry run %v %q", step, prio, got.Code(), got.Message(), want.Code(), want.Message())
			}
			if full.draws != logged.draws {
				t.Fatalf("step %d prio %d: %d draws, dry run %d", step, prio, logged.draws, full.draws)
			}
			if !fast.lowest.below(logged, logged.NodeInfos, prio) {
				summarised++
			}
			// The per-node minima answer as the walk over each node's pods.
			for _, ni := range logged.NodeInfos {
				if got, want := fast.lowest.nodeBelow(ni, prio), hasLowerPriorityPod(ni, prio); got != want {
					t.Fatalf("step %d prio %d node %s: minimum says %v, pods %v", step, prio, ni.Name(), got, want)
				}
			}
		}
		// Bind a pod of priority 10 - step on a node in both runners.
		p := prioPod(fmt.Sprintf("b%d", step), "100m", int32(10-step), fmt.Sprintf("n%03d", step*13))
		for _, r := range []*fitRunner{full, logged.fitRunner} {
			pi := framework.NewPodInfo(p, true)
			ni := r.Node(p.Spec.NodeName)
			ni.AddPod(pi)
			if r == logged.fitRunner {
				logged.added = append(logged.added, helper.AddedPod{Node: ni, Pod: pi})
			}
		}
	}
	if summarised == 0 {
		t.Fatal("the summary was never taken")
	}
}
