package plugintest

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// BenchCluster builds the scheduler benchmark shape: nodes spread over three
// zones and pods in groups of groupSize, two per node, each pod with required
// hostname anti-affinity and a zone spread constraint on its own group.
func BenchCluster(nodes, pods, groupSize int) (*Handle, func(i int) *v1.Pod) {
	var ns []*v1.Node
	for i := 0; i < nodes; i++ {
		ns = append(ns, Node(fmt.Sprintf("node-%05d", i), map[string]string{ZoneLabel: fmt.Sprintf("zone-%d", i%3)}))
	}
	mk := func(i int) *v1.Pod {
		group := map[string]string{"group": fmt.Sprintf("g%d", i/groupSize)}
		p := Pod("bench", fmt.Sprintf("p-%06d", i), "", map[string]string{"group": group["group"], "tier": "x"})
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{Term(HostLabel, group)},
		}}
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: ZoneLabel, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: group},
		}}
		return p
	}
	var ps []*v1.Pod
	for i := 0; i < pods; i++ {
		p := mk(i)
		p.Spec.NodeName = ns[(i*7919)%nodes].Name
		ps = append(ps, p)
	}
	return NewHandle(ns, ps), func(i int) *v1.Pod { return mk(pods + i) }
}

// CyclePlugin is a plugin with the filter and score extension points.
type CyclePlugin interface {
	FilterPlugin
	ScorePlugin
}

// BenchCycle runs one scheduling cycle's worth of a plugin per iteration on
// BenchCluster(5000, 10000, 100): PreFilter, Filter on the nodes upstream
// would examine (up to 500 feasible among the first 600), PreScore and Score
// on them.
func BenchCycle(b *testing.B, newPlugin func(framework.Handle) CyclePlugin) {
	h, next := BenchCluster(5000, 10000, 100)
	pl := newPlugin(h)
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
