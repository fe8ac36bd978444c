package generator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// Plan5000x50 is the scenario of berth's BenchmarkPlan5000x50
// (internal/autoscaler/scaleup/bench_test.go) in the neutral format, so the
// genuine autoscaler and berth decide the very same scale-up side by side
// (README, "Speed"): 50 node groups (2, 4, 8 or 16 cores with four GiB a
// core, labelled pool-0..pool-4, one in five tainted dedicated=gpu), each
// with one Ready node filled to its last millicore by one bound pod, and
// 5,000 pending pods — 50 Deployments of 100 replicas requesting 100m to 2
// cores and 128Mi to 4Gi, one in ten selecting a pool no group has. Any
// change here must be made to berth's benchInput too.
func Plan5000x50() *scenario.Scenario {
	sc := &scenario.Scenario{Name: "plan-5000x50"}
	for i := 0; i < 50; i++ {
		cpu := int64(2 << (i % 4))
		name := fmt.Sprintf("ng-%02d", i)
		labels := map[string]string{"pool": fmt.Sprintf("pool-%d", i%5), corev1.LabelOSStable: "linux"}
		var taints []corev1.Taint
		if i%5 == 4 {
			taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		}
		capacity := corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity((cpu*4)<<30, resource.BinarySI),
			corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
		}
		sc.NodeGroups = append(sc.NodeGroups, scenario.NodeGroup{Name: name, Min: 0, Max: 1000})
		node := fmt.Sprintf("node-%02d", i)
		sc.Nodes = append(sc.Nodes, scenario.Node{
			Name: node, Group: name, Capacity: capacity, Labels: labels, Taints: taints,
			Pods: []scenario.Pod{{
				Name: fmt.Sprintf("filler-%02d-0", i), Owner: scenario.OwnerReplicaSet,
				Labels:   map[string]string{"app": fmt.Sprintf("filler-%02d", i)},
				Requests: requests(cpu*1000, 64<<20),
			}},
		})
	}
	for d := 0; d < 50; d++ {
		app := fmt.Sprintf("app-%02d", d)
		milli := int64(100 * (1 + d%20))
		mem := int64(128 * (1 + d%32))
		for k := 0; k < 100; k++ {
			p := scenario.Pod{
				Name: fmt.Sprintf("%s-%d", app, k), Owner: scenario.OwnerReplicaSet,
				Labels: map[string]string{"app": app}, Requests: requests(milli, mem<<20),
			}
			if d%10 == 9 {
				p.NodeSelector = map[string]string{"pool": "pool-none"}
			}
			sc.Pods = append(sc.Pods, p)
		}
	}
	return sc
}
