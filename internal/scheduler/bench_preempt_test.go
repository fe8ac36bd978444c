package scheduler

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// dryRunState is benchState with every node holding a priority-0 "web" pod
// and a priority-1000 "db" pod of 1850m each, and one pending pod of
// priority 1000 that asks 2500m, spreads over hostnames against web pods
// and keeps hostname anti-affinity to db pods. It fits nowhere, and evicting
// the web pod does not make room, so preemption's dry run examines every
// untainted node and finds no candidate: the shape of the mixed profile's dry runs,
// whose states hold one count per hostname.
func dryRunState() (*cluster.State, *v1.Pod) {
	s := benchState(func(i int) *v1.Pod {
		node := fmt.Sprintf("node-%04d", i/2)
		name, app, prio := fmt.Sprintf("web-%05d", i), "web", int32(0)
		if i%2 == 1 {
			name, app, prio = fmt.Sprintf("db-%05d", i), "db", 1000
		}
		p := plugintest.SizedPod(name, "1850m", "1Gi")
		p.Labels = map[string]string{"app": app}
		p.Spec.Priority = &prio
		p.Spec.NodeName = node
		p.Status.Phase = v1.PodRunning
		return p
	})
	p := plugintest.SizedPod("preemptor", "2500m", "1Gi")
	p.UID = types.UID("preemptor")
	prio := int32(1000)
	p.Spec.Priority = &prio
	p.Labels = map[string]string{"app": "web"}
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelHostname,
		WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
		plugintest.Term(v1.LabelHostname, map[string]string{"app": "db"})}}}
	s.Pods[cluster.Key(p.Namespace, p.Name)] = p
	return s, p
}

// BenchmarkPreemptionDryRun measures one failed cycle of the dry-run pod
// above on 5,000 nodes: PreFilter, Filter on every node, and PostFilter
// examining the 4,000 untainted nodes (each a copy of the node and of the cycle
// state with the victim removed).
func BenchmarkPreemptionDryRun(b *testing.B) {
	s, p := dryRunState()
	for _, n := range s.Nodes {
		n.Labels[v1.LabelHostname] = n.Name
	}
	sc := New()
	if _, err := sc.Sync(s); err != nil {
		b.Fatal(err)
	}
	pi := sc.podInfo(cluster.Key(p.Namespace, p.Name), p)
	res := sc.scheduleOne(s, pi)
	want := "0/5000 nodes are available: 1000 node(s) had untolerated taint(s), 4000 Insufficient cpu. no new claims to deallocate, " +
		"preemption: 0/5000 nodes are available: 1000 Preemption is not helpful for scheduling, 4000 Insufficient cpu."
	if res.status.IsSuccess() || res.preemption == nil || res.preemption.NominatedNodeName != "" || res.diag.Message != want {
		b.Fatalf("cycle = %v %q, want no candidate and %q", res.status.Code(), res.diag.Message, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := sc.scheduleOne(s, pi); res.status.Code() != framework.Unschedulable {
			b.Fatal(res.diag.Message)
		}
	}
}
