package scheduler

import (
	"fmt"
	"runtime"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler/schedtest"
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
		n := schedtest.Node(fmt.Sprintf("node-%04d", i), "4", "32Gi", 110)
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
	p := schedtest.Pod(fmt.Sprintf("pod-%05d", i), "100m", "500Mi")
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

func BenchmarkSchedule(b *testing.B) {
	for _, bc := range []struct {
		name string
		pod  func(int) *v1.Pod
	}{{"plain", plainPod}, {"mixed", mixedPod}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var scheduled int
			var before, after runtime.MemStats
			var mallocs uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s := benchState(bc.pod)
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
		})
	}
}
