package replicaset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
)

// BenchmarkCreate500 is the sync that creates a set's 500 pods from a
// template like the 100,000-pod file's (one container with requests),
// through admission and the events, on a fresh state each time.
func BenchmarkCreate500(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := controllertest.NewState("shop")
		labels := map[string]string{"app": "app-001", "pod-template-hash": "5d8f7c9b4"}
		n := int32(500)
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "app-001-5d8f7c9b4", UID: types.UID("rs-1")},
			Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.local/app-001:1",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}},
		}
		admission.DefaultPodSpec(&rs.Spec.Template.Spec) // as the API server stores a template
		s.ReplicaSets[cluster.Key(rs.Namespace, rs.Name)] = rs
		c := New()
		b.StartTimer()
		if _, err := c.Sync(s); err != nil || len(s.Pods) != 500 {
			b.Fatalf("%d pods, err %v", len(s.Pods), err)
		}
	}
}
