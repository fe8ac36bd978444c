package scaleup

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/benchcpu"
)

// benchInput is one scale-up decision at scale: 5,000 pending pods (50
// Deployments of 100 replicas, requests from 100m/128Mi to 2/4Gi) over 50
// node groups (2 to 16 cores, one in five tainted, one in ten pinned to a
// label no pod asks for), with 50 busy nodes already in the cluster.
func benchInput() Input {
	var groups []Group
	var nodes []*corev1.Node
	for i := 0; i < 50; i++ {
		cpu := int64(2 << (i % 4)) // 2, 4, 8, 16
		labels := map[string]string{"pool": fmt.Sprintf("pool-%d", i%5)}
		var taints []corev1.Taint
		if i%5 == 4 {
			taints = append(taints, corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})
		}
		g := group(fmt.Sprintf("ng-%02d", i), 1, 1000, cpu, cpu*4, labels, taints...)
		groups = append(groups, g)
		n := testNode(fmt.Sprintf("node-%02d", i), cpu, cpu*4, labels, taints...)
		nodes = append(nodes, n)
	}
	var pods, pending []*corev1.Pod
	for i, n := range nodes {
		// Fill each node so no pending pod fits it.
		cpu := n.Status.Allocatable.Cpu().MilliValue()
		pods = append(pods, testPods(fmt.Sprintf("filler-%02d", i), 1, cpu, 64, func(p *corev1.Pod) { p.Spec.NodeName = n.Name })...)
	}
	for d := 0; d < 50; d++ {
		milli := int64(100 * (1 + d%20))
		mem := int64(128 * (1 + d%32))
		pending = append(pending, testPods(fmt.Sprintf("app-%02d", d), 100, milli, mem, func(p *corev1.Pod) {
			if d%10 == 9 {
				p.Spec.NodeSelector = map[string]string{"pool": "pool-none"}
			}
		})...)
	}
	return Input{Nodes: nodes, Pods: pods, Pending: pending, Groups: groups, Options: opts(), Seed: 1}
}

// BenchmarkPlan5000x50 is one scale-up decision: 5,000 pending pods, 50
// node groups (README "cluster-autoscaler"; the genuine autoscaler decides
// the same scenario in ca-conformance/genuine, README "Speed" there). On a
// shared host read cpu-ns/op:
//
//	go test -run '^$' -bench Plan5000x50 -cpu 1 -benchmem ./internal/autoscaler/scaleup
func BenchmarkPlan5000x50(b *testing.B) {
	in := benchInput()
	b.ReportAllocs()
	cpu0, cpuOK := benchcpu.Process()
	for b.Loop() {
		res, err := Plan(in)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Increases) == 0 {
			b.Fatal("no scale-up")
		}
	}
	if cpu1, ok := benchcpu.Process(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}
