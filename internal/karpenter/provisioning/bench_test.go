package provisioning

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/benchcpu"
)

// benchPods is a mixed batch: plain pods of several sizes, pods pinned to
// arm64 or a zone, zonal spread and hostname anti-affinity groups.
func benchPods(n int) []*corev1.Pod {
	sizes := []string{"100m", "250m", "500m", "1", "2"}
	var out []*corev1.Pod
	for i := 0; i < n; i++ {
		p := pendingPod(fmt.Sprintf("p-%05d", i), sizes[i%len(sizes)], "256Mi")
		switch i % 10 {
		case 1:
			p.Spec.NodeSelector = map[string]string{corev1.LabelArchStable: "arm64"}
		case 2:
			p.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: "eu-west-1b"}
		case 3:
			p.Labels["app"] = fmt.Sprintf("spread-%d", i%7)
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}}}
		case 4:
			p.Labels["app"] = fmt.Sprintf("anti-%d", i%5)
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}}}}}
		}
		out = append(out, p)
	}
	return out
}

// BenchmarkSolve solves mixed batches over the full eu-west-1 catalog with
// two pools (go test -run x -bench Solve -cpu 1 ./internal/karpenter/provisioning).
func BenchmarkSolve(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			pods := benchPods(n)
			cpu0, cpuOK := benchcpu.Process()
			for b.Loop() {
				if _, err := Solve(&Input{NodePools: []*NodePool{pool("default", 0), pool("spot", 10,
					req("karpenter.sh/capacity-type", corev1.NodeSelectorOpIn, "spot"))}, Pods: append([]*corev1.Pod(nil), pods...)}); err != nil {
					b.Fatal(err)
				}
			}
			// CPU per solve (GC included), the figure to compare on a busy host.
			if cpu1, ok := benchcpu.Process(); ok && cpuOK {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
