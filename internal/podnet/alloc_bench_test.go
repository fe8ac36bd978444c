package podnet

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkAllocate is one sync handing out 20 addresses on each of 1,000
// nodes with a /24 podCIDR each, in round-robin order (pods of one
// Deployment spread over the nodes), with the allocator before the slots
// for comparison. The pods are in the state, as they are when the kubelet
// starts them.
func BenchmarkAllocate(b *testing.B) {
	s := plainState()
	var nodes []*corev1.Node
	for i := range 1000 {
		n := node(fmt.Sprintf("node-%04d", i), podCIDR(fmt.Sprintf("10.%d.%d.0/24", 1+i/256, i%256)), ip(fmt.Sprintf("192.168.%d.%d", i/250, 1+i%250)))
		s.Nodes[n.Name] = n
		nodes = append(nodes, n)
	}
	// The pods the sync starts are in the state already, without addresses.
	for i := range 20 * len(nodes) {
		s.Pods[fmt.Sprintf("default/p-%d", i)] = &corev1.Pod{Spec: corev1.PodSpec{NodeName: nodes[i%len(nodes)].Name}}
	}
	run := func(b *testing.B, allocate func(*corev1.Node) (string, error)) {
		for range 20 {
			for _, n := range nodes {
				if _, err := allocate(n); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("slots", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			run(b, NewAllocator(s).Allocate)
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			run(b, newRefAllocator(s).Allocate)
		}
	})
}
