package interpodaffinity

import (
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// BenchmarkCycle runs one scheduling cycle's worth of this plugin for a pod
// with hostname anti-affinity on 5,000 nodes holding 10,000 pods: PreFilter,
// Filter on the 500 nodes upstream would examine, PreScore and Score on them.
func BenchmarkCycle(b *testing.B) {
	h, next := pt.BenchCluster(5000, 10000, 100)
	pl := New(h)
	nodes := h.Nodes()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pi := framework.NewPodInfo(next(i%10000), true)
		cs := framework.NewCycleState()
		if _, st := pl.PreFilter(cs, pi, nodes); !st.IsSuccess() {
			b.Fatal(st.Message())
		}
		var feasible []*framework.NodeInfo
		for _, ni := range nodes[:600] {
			if pl.Filter(cs, pi, ni).IsSuccess() {
				feasible = append(feasible, ni)
				if len(feasible) == 500 {
					break
				}
			}
		}
		if st := pl.PreScore(cs, pi, feasible); st.IsSuccess() {
			for _, ni := range feasible {
				pl.Score(cs, pi, ni)
			}
		}
	}
}
