package scaleup

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/autoscaler/config"
)

// testNode is a Ready node with cpu cores, memGiB of memory and 110 pods,
// allocatable equal to capacity (as the AWS provider's templates).
func testNode(name string, cpu, memGiB int64, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	l := map[string]string{corev1.LabelHostname: name, corev1.LabelOSStable: "linux"}
	for k, v := range labels {
		l[k] = v
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memGiB<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	return &corev1.Node{
		TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, UID: types.UID("uid-" + name)},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity.DeepCopy(),
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

// testPods are n pending pods of one ReplicaSet (one equivalence group),
// each requesting milliCPU and memMiB.
func testPods(owner string, n int, milliCPU, memMiB int64, mutate ...func(*corev1.Pod)) []*corev1.Pod {
	yes := true
	var out []*corev1.Pod
	for i := 0; i < n; i++ {
		p := &corev1.Pod{
			TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%d", owner, i), Namespace: "default", UID: types.UID(fmt.Sprintf("uid-%s-%d", owner, i)),
				Labels:          map[string]string{"app": owner},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: types.UID("rs-" + owner), Controller: &yes}},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{
					corev1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
					corev1.ResourceMemory: *resource.NewQuantity(memMiB<<20, resource.BinarySI),
				}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}},
		}
		for _, m := range mutate {
			m(p)
		}
		out = append(out, p)
	}
	return out
}

// group is a node group with a template of cpu cores and memGiB.
func group(name string, target, max int, cpu, memGiB int64, labels map[string]string, taints ...corev1.Taint) Group {
	return Group{Name: name, MinSize: 0, MaxSize: max, Target: target, Registered: target,
		Template: testNode("template-"+name, cpu, memGiB, labels, taints...)}
}

func opts(mutate ...func(*config.Options)) config.Options {
	o := config.Defaults()
	for _, m := range mutate {
		m(&o)
	}
	return o
}

func increases(r *Result) string {
	return fmt.Sprint(r.Increases)
}
