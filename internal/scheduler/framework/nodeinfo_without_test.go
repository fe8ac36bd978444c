package framework

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestCloneWithoutMatchesRemovePod compares CloneWithout with Clone and
// RemovePod of each dropped pod on random nodes: pods with requests
// (scalar ones too), host ports, affinity and required anti-affinity,
// dropping none, some or all. Slices are compared by content (nil and
// empty alike).
func TestCloneWithoutMatchesRemovePod(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	term := v1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}
	for round := 0; round < 300; round++ {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("8"), v1.ResourcePods: resource.MustParse("110"), "example.com/gpu": resource.MustParse("4")}}}
		ni := NewNodeInfo(node)
		ni.Index = int32(r.IntN(10))
		prio := map[*PodInfo]int{}
		for i := r.IntN(8); i > 0; i-- {
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default", UID: types.UID(fmt.Sprintf("u%d", i))}}
			c := v1.Container{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 100*r.IntN(5)))}}}
			if r.IntN(3) == 0 {
				c.Resources.Requests["example.com/gpu"] = resource.MustParse("1")
			}
			if r.IntN(3) == 0 {
				c.Ports = []v1.ContainerPort{{HostPort: int32(8000 + r.IntN(3)), ContainerPort: 80, Protocol: v1.ProtocolTCP}}
			}
			p.Spec.Containers = []v1.Container{c}
			switch r.IntN(4) {
			case 0:
				p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
			case 1:
				p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
			}
			pi := NewPodInfo(p, true)
			prio[pi] = r.IntN(3)
			ni.AddPod(pi)
		}
		cut := r.IntN(4)
		drop := func(p *PodInfo) bool { return prio[p] < cut }
		got, removed := ni.CloneWithout(drop)
		want := ni.Clone()
		var wantRemoved []*PodInfo
		for _, p := range ni.Pods {
			if drop(p) {
				want.RemovePod(p.Pod)
				wantRemoved = append(wantRemoved, p)
			}
		}
		same := func(a, b []*PodInfo) bool { return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b)) }
		if !same(removed, wantRemoved) || !same(got.Pods, want.Pods) || !same(got.PodsWithAffinity, want.PodsWithAffinity) ||
			!same(got.PodsWithRequiredAntiAffinity, want.PodsWithRequiredAntiAffinity) {
			t.Fatalf("round %d: pod lists differ: removed %d/%d pods %d/%d", round, len(removed), len(wantRemoved), len(got.Pods), len(want.Pods))
		}
		if len(got.UsedPorts) != 0 || len(want.UsedPorts) != 0 {
			if !reflect.DeepEqual(got.UsedPorts, want.UsedPorts) {
				t.Fatalf("round %d: ports %v, want %v", round, got.UsedPorts, want.UsedPorts)
			}
		}
		if !reflect.DeepEqual(got.Requested, want.Requested) || !reflect.DeepEqual(got.NonZeroRequested, want.NonZeroRequested) ||
			!reflect.DeepEqual(got.Allocatable, want.Allocatable) || got.Generation != want.Generation || got.Index != want.Index ||
			got.Node != want.Node {
			t.Fatalf("round %d: sums differ:\n got %+v %+v gen %d\nwant %+v %+v gen %d", round, got.Requested, got.NonZeroRequested, got.Generation,
				want.Requested, want.NonZeroRequested, want.Generation)
		}
		// The copy is independent of the original.
		if len(got.Pods) > 0 {
			got.Pods[0] = nil
			if ni.Pods[0] == nil {
				t.Fatalf("round %d: copy shares the original's pod list", round)
			}
		}
	}
}
