package defaultpreemption

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// TestPotentialNodesByPosition checks potentialNodes on statuses kept by
// position against the walk that reads each node's status by name, for
// random statuses (Unschedulable, U&U, none) and absent statuses of each
// code, including an Unschedulable one that makes every absent node
// potential.
func TestPotentialNodesByPosition(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var nodes []*v1.Node
	for i := 0; i < 40; i++ {
		nodes = append(nodes, plugintest.SizedNode(fmt.Sprintf("n%02d", i), "1", "1Gi", 10))
	}
	nis := plugintest.NodeInfos(plugintest.NewVersionHandle("1.36", nil).Feats, nodes)
	names := make([]string, len(nis))
	for i, ni := range nis {
		names[i] = ni.Name()
	}
	codes := []framework.Code{framework.Unschedulable, framework.UnschedulableAndUnresolvable}
	for round := 0; round < 300; round++ {
		byPos := &framework.StatusesByPosition{Names: names, Status: make([]*framework.Status, len(nis))}
		byName := map[string]*framework.Status{}
		for i := range nis {
			if r.IntN(4) == 0 {
				continue
			}
			st := framework.NewStatus(codes[r.IntN(2)], "x")
			byPos.Status[i], byName[names[i]] = st, st
			byPos.Count++
		}
		var absent *framework.Status
		if k := r.IntN(3); k < 2 {
			absent = framework.NewStatus(codes[k], "absent")
		}
		got := potentialNodes(nis, framework.NodeToStatus{ByPosition: byPos, Absent: absent})
		want := potentialByName(nis, framework.NodeToStatus{Statuses: byName, Absent: absent})
		if len(got) != len(want) {
			t.Fatalf("round %d: %d potential nodes by position, %d by name", round, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("round %d: potential[%d] %s by position, %s by name", round, i, got[i].Name(), want[i].Name())
			}
		}
	}
}

// TestCountedReasonsMatchStatusMap renders the no-candidate message from
// reasons summed over the dry run's list (countReasons) and from the same
// statuses kept by node name, for random lists sharing status objects.
func TestCountedReasonsMatchStatusMap(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var nodes []*v1.Node
	for i := 0; i < 30; i++ {
		nodes = append(nodes, plugintest.SizedNode(fmt.Sprintf("n%02d", i), "1", "1Gi", 10))
	}
	nis := plugintest.NodeInfos(plugintest.NewVersionHandle("1.36", nil).Feats, nodes)
	shared := []*framework.Status{
		framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgNoVictims),
		framework.NewStatus(framework.Unschedulable, "node(s) didn't match pod topology spread constraints"),
		framework.NewStatus(framework.Unschedulable, "Insufficient cpu", "Too many pods"),
	}
	for round := 0; round < 300; round++ {
		var list []nodeStatus
		byName := map[string]*framework.Status{}
		for _, ni := range nis {
			if r.IntN(3) == 0 {
				continue
			}
			st := shared[r.IntN(len(shared))]
			if r.IntN(4) == 0 {
				st = framework.NewStatus(framework.Unschedulable, fmt.Sprintf("reason %d", r.IntN(3)))
			}
			list = append(list, nodeStatus{ni, st})
			byName[ni.Name()] = st
		}
		absent := framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgNotHelpful)
		want := helper.FitError{NumAllNodes: len(nis), NodeToStatus: framework.NodeToStatus{Statuses: byName, Absent: absent}}
		got := helper.FitError{NumAllNodes: len(nis), NodeToStatus: framework.NodeToStatus{Absent: absent},
			Counted: countReasons(list), CountedNodes: len(list)}
		if g, w := got.Error(), want.Error(); g != w {
			t.Fatalf("round %d: counted %q, by name %q", round, g, w)
		}
	}
}
