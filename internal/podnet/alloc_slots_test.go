package podnet

import (
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// slotsCluster is a cluster with every kind of node Allocate tells apart:
// EKS nodes with ENI limits, nodes sharing one range, a range of one
// address, Fargate nodes with and without an address, a node without any
// range, IPv6, and pods already holding addresses (some finished).
func slotsCluster() *cluster.State {
	s := eksState()
	for _, n := range []*corev1.Node{
		node("eks-a", instanceType("m5.large"), ip("192.168.100.7")),
		node("eks-b", instanceType("t3.micro"), ip("192.168.100.9")), // same subnet, 2 addresses
		node("eks-c", instanceType("t3.micro"), zone("eu-west-1c")),
		node("kind-1", podCIDR("10.244.1.0/28"), ip("172.18.0.3")),
		node("kind-2", podCIDR("10.244.1.0/28"), ip("172.18.0.4")), // overlaps kind-1
		node("tiny", podCIDR("10.250.0.0/30")),
		node("fargate-ip", label(aws.LabelComputeType, "fargate"), ip("192.168.5.5")),
		node("fargate-bare", label(aws.LabelComputeType, "fargate"), podCIDR("10.251.0.0/29")),
		node("bare"),
		node("v6", ip("fd00:10:20::5")),
	} {
		s.Nodes[n.Name] = n
	}
	held := []struct{ node, ip string }{
		{"kind-1", "10.244.1.2"}, {"kind-2", "10.244.1.5"}, {"eks-a", "192.168.100.20"},
		{"tiny", "10.250.0.2"}, {"bare", fmt.Sprintf("10.0.0.%d", 7)},
	}
	for i, h := range held {
		phase := corev1.PodRunning
		if i == 3 {
			phase = corev1.PodSucceeded // its address is free again
		}
		s.Pods[fmt.Sprintf("default/held-%d", i)] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("held-%d", i)},
			Spec:       corev1.PodSpec{NodeName: h.node},
			Status:     corev1.PodStatus{PodIP: h.ip, Phase: phase},
		}
	}
	return s
}

// The per-node slots hand out the addresses and failures the allocator
// before them did, in the same order and from the same random draws, over
// several syncs whose addresses the next sync finds in use.
func TestAllocatorMatchesReference(t *testing.T) {
	a, b := slotsCluster(), slotsCluster()
	names := []string{"eks-a", "eks-b", "eks-c", "kind-1", "kind-2", "tiny", "fargate-ip", "fargate-bare", "bare", "v6"}
	pick := rand.New(rand.NewSource(7))
	pod := 0
	for sync := 0; sync < 6; sync++ {
		got, want := NewAllocator(a), newRefAllocator(b)
		for i := 0; i < 40; i++ {
			name := names[pick.Intn(len(names))]
			ipA, errA := got.Allocate(a.Nodes[name])
			ipB, errB := want.Allocate(b.Nodes[name])
			if ipA != ipB || fmt.Sprint(errA) != fmt.Sprint(errB) {
				t.Fatalf("sync %d, allocation %d on %s: %q (%v), reference %q (%v)", sync, i, name, ipA, errA, ipB, errB)
			}
			if errA != nil {
				continue
			}
			pod++
			for _, s := range []*cluster.State{a, b} {
				s.Pods[fmt.Sprintf("default/p-%d", pod)] = &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p-%d", pod)},
					Spec:       corev1.PodSpec{NodeName: name},
					Status:     corev1.PodStatus{PodIP: ipA, PodIPs: []corev1.PodIP{{IP: ipA}}, Phase: corev1.PodRunning},
				}
			}
		}
		a.ResourceVersion += 3
		b.ResourceVersion += 3
		if x, y := a.Rand.Uint64(), b.Rand.Uint64(); x != y {
			t.Fatalf("sync %d: random sources differ afterwards", sync)
		}
	}
	if pod < 100 {
		t.Fatalf("only %d addresses handed out: the cluster runs out too early to compare", pod)
	}
}
