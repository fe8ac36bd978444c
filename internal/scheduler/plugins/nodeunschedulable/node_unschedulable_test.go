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

// TestFlagsFollowSnapshot: nodes of the handle's list are answered from the
// flags, copies whose Index does not lead to them from their own Node, and
// a new list is read anew.
func TestFlagsFollowSnapshot(t *testing.T) {
	var nodes []*v1.Node
	for i := 0; i < 6; i++ {
		n := plugintest.SizedNode(string(rune('a'+i)), "1", "1Gi", 10)
		n.Spec.Unschedulable = i%3 == 1
		nodes = append(nodes, n)
	}
	h := plugintest.NewHandle(nodes, nil)
	pl := New(h).(*NodeUnschedulable)
	pi := framework.NewPodInfo(plugintest.SizedPod("p", "", ""), true)
	check := func(list []*framework.NodeInfo) {
		t.Helper()
		for _, ni := range list {
			copied := framework.NewNodeInfo(ni.Node)
			copied.Index = (ni.Index + 1) % int32(len(list))
			for _, x := range []*framework.NodeInfo{ni, copied} {
				if got := pl.Filter(framework.NewCycleState(), pi, x).IsSuccess(); got == x.Node.Spec.Unschedulable {
					t.Fatalf("node %s (unschedulable %v): Filter success %v", x.Name(), x.Node.Spec.Unschedulable, got)
				}
			}
		}
	}
	check(h.NodeInfos)
	if pl.snap == nil || pl.snap.Position(h.NodeInfos[1]) != 1 {
		t.Fatal("flags not built over the handle's list")
	}
	// A cordon between snapshots: the next list is read anew.
	cordoned := nodes[0].DeepCopy()
	cordoned.Spec.Unschedulable = true
	h2 := plugintest.NewHandle(append([]*v1.Node{cordoned}, nodes[1:]...), nil)
	h.NodeInfos = h2.NodeInfos
	check(h.NodeInfos)
}
