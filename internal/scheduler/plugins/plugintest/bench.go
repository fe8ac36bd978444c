package plugintest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
