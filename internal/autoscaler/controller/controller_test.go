package controller

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func deployment(containers ...corev1.Container) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-autoscaler", Namespace: "kube-system"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cluster-autoscaler"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers}},
		},
	}
}

func TestContainer(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    corev1.Container
		want bool
	}{
		{"upstream image with tag", corev1.Container{Name: "ca", Image: "registry.k8s.io/autoscaling/cluster-autoscaler:v1.32.1"}, true},
		{"image by digest", corev1.Container{Name: "ca", Image: "registry.k8s.io/autoscaling/cluster-autoscaler@sha256:abc"}, true},
		{"registry with port", corev1.Container{Name: "ca", Image: "my.registry:5000/cluster-autoscaler"}, true},
		{"mirror under another name, command says it", corev1.Container{Name: "ca", Image: "mirror/ca:1", Command: []string{"/usr/bin/cluster-autoscaler"}}, true},
		{"something else", corev1.Container{Name: "web", Image: "nginx:1.27", Command: []string{"nginx"}}, false},
		{"a look-alike name", corev1.Container{Name: "x", Image: "acme/cluster-autoscaler-operator:1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Container(deployment(tc.c)) != nil; got != tc.want {
				t.Fatalf("Container = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOptionsAndRunningGate(t *testing.T) {
	s := cluster.New("", 1)
	if _, ok, _ := Options(s); ok {
		t.Fatal("options without a Deployment")
	}
	d := deployment(corev1.Container{Name: "ca", Image: "registry.k8s.io/autoscaling/cluster-autoscaler:v1.32.1",
		Command: []string{"./cluster-autoscaler", "--scan-interval=30s", "--expander=most-pods"}})
	s.Deployments[cluster.Key(d.Namespace, d.Name)] = d
	o, ok, err := Options(s)
	if !ok || err != nil || o.ScanInterval.String() != "30s" || o.Expanders[0] != "most-pods" {
		t.Fatalf("options %+v ok %v err %v", o, ok, err)
	}
	if running(s, d) {
		t.Fatal("running without a pod")
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ca-1", Namespace: "kube-system", Labels: map[string]string{"app": "cluster-autoscaler"}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	s.Pods[cluster.Key(pod.Namespace, pod.Name)] = pod
	if running(s, d) {
		t.Fatal("a Pending pod counts as running")
	}
	pod.Status.Phase = corev1.PodRunning
	if !running(s, d) {
		t.Fatal("a Running pod does not count")
	}
	// A Deployment whose flags CA would refuse yields an error, not options.
	bad := deployment(corev1.Container{Name: "ca", Image: "registry.k8s.io/autoscaling/cluster-autoscaler:v1",
		Command: []string{"./cluster-autoscaler", "--no-such-flag"}})
	s.Deployments[cluster.Key(bad.Namespace, bad.Name)] = bad
	if _, _, err := Options(s); err == nil {
		t.Fatal("a bad flag parsed")
	}
}
