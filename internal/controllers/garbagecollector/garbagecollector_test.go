package garbagecollector

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/deployment"
	"github.com/berth-sim/berth/internal/controllers/replicaset"
	"github.com/berth-sim/berth/internal/sim"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCascadingDeletion(t *testing.T) {
	s := controllertest.NewState()
	labels := map[string]string{"app": "web"}
	two := int32(2)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1"}}}}},
	}
	if err := admission.Create(s, d); err != nil {
		t.Fatal(err)
	}
	// A bare pod and a pod owned by something unknown must survive.
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x:1"}}}}
	admission.CreatePod(s, bare)
	ctrls := []sim.Controller{deployment.New(), replicaset.New(), New()}
	if err := sim.Settle(s, ctrls, time.Hour); err != nil {
		t.Fatal(err)
	}
	if len(s.ReplicaSets) != 1 || len(s.Pods) != 3 {
		t.Fatalf("setup: %d sets %d pods", len(s.ReplicaSets), len(s.Pods))
	}
	// A hand edit moves the resource version, as every write does
	// (docs/simulation-speed.md#passes-that-cannot-change-anything).
	delete(s.Deployments, "default/web")
	s.Bump()
	if err := sim.Settle(s, ctrls, time.Hour); err != nil {
		t.Fatal(err)
	}
	if len(s.ReplicaSets) != 0 || len(s.Pods) != 1 || s.Pods["default/bare"] == nil {
		t.Fatalf("after deletion: %d sets %d pods", len(s.ReplicaSets), len(s.Pods))
	}
}
