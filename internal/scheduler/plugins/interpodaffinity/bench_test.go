package interpodaffinity

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// BenchmarkCycle runs one scheduling cycle's worth of this plugin for a pod
// with hostname anti-affinity on 5,000 nodes holding 10,000 pods: PreFilter,
// Filter on the 500 nodes upstream would examine, PreScore and Score on them.
func BenchmarkCycle(b *testing.B) {
	pt.BenchCycle(b, func(h framework.Handle) pt.CyclePlugin { return New(h) })
}

// BenchmarkPreScorePreferred is PreScore and Score on 500 nodes for a pod
// with preferred hostname affinity and zone anti-affinity towards groups
// spread over 5,000 nodes holding 10,000 pods (the per-domain sums run over
// thousands of hostname domains).
func BenchmarkPreScorePreferred(b *testing.B) {
	ph, next := pt.BenchCluster(5000, 10000, 100)
	// The log lets the index be kept across cycles, as in the scheduler.
	h := &logHandle{Handle: ph}
	pl := New(h)
	nodes := h.Nodes()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := next(i % 10000)
		p.Spec.Affinity = &v1.Affinity{
			PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
				{Weight: 40, PodAffinityTerm: pt.Term(pt.HostLabel, map[string]string{"tier": "x"})}}},
			PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
				{Weight: 10, PodAffinityTerm: pt.Term(pt.ZoneLabel, map[string]string{"group": p.Labels["group"]})}}},
		}
		pi := framework.NewPodInfo(p, true)
		cs := framework.NewCycleState()
		if st := pl.PreScore(cs, pi, nodes[:500]); !st.IsSuccess() {
			b.Fatal(st)
		}
		for _, ni := range nodes[:500] {
			pl.Score(cs, pi, ni)
		}
	}
}
