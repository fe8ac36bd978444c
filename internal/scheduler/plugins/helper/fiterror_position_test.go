package helper

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// randomStatuses returns n node names and a random status per node (nil:
// none), drawn from a few shared objects and some of their own, as failed
// cycles produce them.
func randomStatuses(r *rand.Rand, n int) ([]string, []*framework.Status) {
	shared := []*framework.Status{
		framework.NewStatus(framework.Unschedulable, "Insufficient cpu"),
		framework.NewStatus(framework.Unschedulable, "Too many pods", "Insufficient memory"),
		framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"),
	}
	names := make([]string, n)
	statuses := make([]*framework.Status, n)
	for i := range names {
		names[i] = fmt.Sprintf("node-%03d", i)
		switch k := r.IntN(6); {
		case k < 3:
			statuses[i] = shared[k]
		case k == 3:
			statuses[i] = framework.NewStatus(framework.Unschedulable, "Insufficient cpu")
		case k == 4:
			statuses[i] = framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("reason %d", r.IntN(3)))
		}
	}
	return names, statuses
}

// TestFitErrorByPositionMatchesMap renders random failed cycles' messages
// from statuses by position and from the same statuses by name, with and
// without an absent status and counted summaries.
func TestFitErrorByPositionMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 500; round++ {
		n := 1 + r.IntN(60)
		names, statuses := randomStatuses(r, n)
		byName := map[string]*framework.Status{}
		count := 0
		for i, st := range statuses {
			if st != nil {
				byName[names[i]] = st
				count++
			}
		}
		var absent *framework.Status
		if r.IntN(2) == 0 {
			absent = framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [NodeAffinity]")
		}
		all := n + r.IntN(5)
		want := FitError{NumAllNodes: all, NodeToStatus: framework.NodeToStatus{Statuses: byName, Absent: absent}, PostFilterMsg: "x"}
		got := FitError{NumAllNodes: all, NodeToStatus: framework.NodeToStatus{Absent: absent,
			ByPosition: &framework.StatusesByPosition{Names: names, Status: statuses, Count: count}}, PostFilterMsg: "x"}
		if r.IntN(3) == 0 {
			want.Counted, want.CountedNodes = map[string]int{"No preemption victims found for incoming pod": 2}, 2
			got.Counted, got.CountedNodes = want.Counted, 2
			want.NumAllNodes += 2
			got.NumAllNodes += 2
		}
		if g, w := got.Error(), want.Error(); g != w {
			t.Fatalf("round %d: by position %q, by name %q", round, g, w)
		}
		for _, name := range names {
			if g, w := StatusOf(got.NodeToStatus, name), StatusOf(want.NodeToStatus, name); g != w {
				t.Fatalf("round %d node %s: by position %v, by name %v", round, name, g, w)
			}
		}
		if m := got.NodeToStatus.Map(); len(m) != len(byName) || got.NodeToStatus.Len() != len(byName) {
			t.Fatalf("round %d: Map has %d, Len %d, want %d", round, len(m), got.NodeToStatus.Len(), len(byName))
		} else {
			for k, v := range byName {
				if m[k] != v {
					t.Fatalf("round %d: Map[%s] = %v, want %v", round, k, m[k], v)
				}
			}
		}
	}
}
