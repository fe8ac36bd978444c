package scheduler

import (
	"fmt"
	"runtime"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

const (
	benchNodes = 5000
	benchPods  = 10000
)

var benchZones = []string{"us-west-2a", "us-west-2b", "us-west-2c"}

// benchState is scheduler_perf's SchedulingBasic shape: 5000 nodes of
// 4 CPU / 32Gi / 110 pods over three zones, every fifth node tainted.
func benchState(pods func(i int) *v1.Pod) *cluster.State {
	s := cluster.New("1.36", 1)
	for i := 0; i < benchNodes; i++ {
		n := plugintest.SizedNode(fmt.Sprintf("node-%04d", i), "4", "32Gi", 110)
		n.Labels[v1.LabelTopologyZone] = benchZones[i%len(benchZones)]
		n.Labels[v1.LabelTopologyRegion] = "us-west-2"
		if i%5 == 0 {
			n.Labels["pool"] = "dedicated"
			n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectNoSchedule}}
		}
		s.Nodes[n.Name] = n
		s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, n.Name)
	}
	for i := 0; i < benchPods; i++ {
		p := pods(i)
		p.UID = types.UID(fmt.Sprintf("uid-%05d", i))
		s.Pods[cluster.Key(p.Namespace, p.Name)] = p
	}
	return s
}

func plainPod(i int) *v1.Pod {
	p := plugintest.SizedPod(fmt.Sprintf("pod-%05d", i), "100m", "500Mi")
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80}}
	return p
}

// mixedPod cycles through four templates: required node affinity, hostname
// anti-affinity, zone spread, and tolerating the dedicated pool.
func mixedPod(i int) *v1.Pod {
	p := plainPod(i)
	switch i % 4 {
	case 0:
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: benchZones[:2]}}}}}}}
	case 1:
		p.Labels = map[string]string{"app": "anti"}
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{appTerm("anti", v1.LabelHostname)}}}
	case 2:
		p.Labels = map[string]string{"app": "spread"}
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}}}
	case 3:
		p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "batch", Effect: v1.TaintEffectNoSchedule}}
		p.Spec.NodeSelector = map[string]string{"pool": "dedicated"}
	}
	return p
}

// benchOwners is how many ReplicaSets (each with a Service) own the pods of
// the "owned" case.
const benchOwners = 4

// ownedPod belongs to one of benchOwners ReplicaSets, as Deployment pods do,
// so the system default topology spread constraints apply to it.
func ownedPod(i int) *v1.Pod {
	p := plainPod(i)
	app := fmt.Sprintf("web-%d", i%benchOwners)
	p.Labels = map[string]string{"app": app, "pod-template-hash": "5d4f8c7b9"}
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet",
		Name: app + "-5d4f8c7b9", UID: types.UID("rs-" + app), Controller: &yes}}
	return p
}

// addOwners adds the ReplicaSets and Services that ownedPod refers to.
func addOwners(s *cluster.State) {
	for k := 0; k < benchOwners; k++ {
		app := fmt.Sprintf("web-%d", k)
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: app + "-5d4f8c7b9", Namespace: "default", UID: types.UID("rs-" + app)},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app, "pod-template-hash": "5d4f8c7b9"}}}}
		s.ReplicaSets[cluster.Key(rs.Namespace, rs.Name)] = rs
		svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: "default"},
			Spec: v1.ServiceSpec{Selector: map[string]string{"app": app}}}
		s.Services[cluster.Key(svc.Namespace, svc.Name)] = svc
	}
}

func BenchmarkSchedule(b *testing.B) {
	for _, bc := range []struct {
		name  string
		pod   func(int) *v1.Pod
		setup func(*cluster.State)
	}{{"plain", plainPod, nil}, {"mixed", mixedPod, nil}, {"owned", ownedPod, addOwners}} {
		b.Run(bc.name, func(b *testing.B) { benchSync(b, bc.pod, bc.setup) })
	}
}

// benchSync schedules benchPods pods made by pod on benchState in one Sync
// per iteration and reports pods/s and allocations per pod.
func benchSync(b *testing.B, pod func(int) *v1.Pod, setup func(*cluster.State)) {
	b.ReportAllocs()
	var scheduled int
	var before, after runtime.MemStats
	var mallocs uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := benchState(pod)
		if setup != nil {
			setup(s)
		}
		sc := New()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		if _, err := sc.Sync(s); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.ReadMemStats(&after)
		mallocs += after.Mallocs - before.Mallocs
		scheduled = 0
		for _, p := range s.Pods {
			if p.Spec.NodeName != "" {
				scheduled++
			}
		}
		if scheduled != benchPods {
			b.Fatalf("scheduled %d of %d", scheduled, benchPods)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(benchPods)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(float64(mallocs)/float64(benchPods*b.N), "allocs/pod")
}

// BenchmarkSimulate measures the seam on a loaded cluster: 5,000 nodes with
// 10,000 bound pods; each iteration forks a simulation with one
// hypothetical node and asks Schedule and Explain for one mixed pod.
func BenchmarkSimulate(b *testing.B) {
	s := benchState(func(i int) *v1.Pod {
		p := mixedPod(i)
		p.Spec.NodeName = fmt.Sprintf("node-%04d", (i*7)%benchNodes)
		return p
	})
	sc := New()
	pending := mixedPod(benchPods + 1)
	pending.Name = "pending"
	b.Run("fork", func(b *testing.B) {
		for b.Loop() {
			if _, err := sc.Simulate(s, templateNode("new-1", "4")); err != nil {
				b.Fatal(err)
			}
		}
	})
	sim, err := sc.Simulate(s, templateNode("new-1", "4"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("schedule", func(b *testing.B) {
		for b.Loop() {
			sim.Schedule(pending)
		}
	})
	b.Run("explain", func(b *testing.B) {
		for b.Loop() {
			sim.Explain(pending)
		}
	})
}
