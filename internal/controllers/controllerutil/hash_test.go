package controllerutil

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestComputeHash(t *testing.T) {
	a := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ui"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ui", Image: "ui:1"}}}}
	b := a.DeepCopy()
	if ComputeHash(a, nil) != ComputeHash(b, nil) {
		t.Fatal("equal templates hash differently")
	}
	b.Spec.NodeSelector = map[string]string{"kubernetes.io/arch": "arm64"}
	if ComputeHash(a, nil) == ComputeHash(b, nil) {
		t.Fatal("different templates hash the same")
	}
	one := int32(1)
	if ComputeHash(a, nil) == ComputeHash(a, &one) {
		t.Fatal("collision count does not change the hash")
	}
	for _, r := range ComputeHash(a, nil) {
		if !strings.ContainsRune("bcdfghjklmnpqrstvwxz2456789", r) {
			t.Fatalf("hash %q has %q outside the SafeEncodeString alphabet", ComputeHash(a, nil), r)
		}
	}
}

func TestEqualIgnoreHash(t *testing.T) {
	a := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ui", "pod-template-hash": "abc"}}}
	b := a.DeepCopy()
	b.Labels["pod-template-hash"] = "xyz"
	if !EqualIgnoreHash(a, b) {
		t.Fatal("templates differing only in pod-template-hash compare unequal")
	}
	if a.Labels["pod-template-hash"] != "abc" {
		t.Fatal("comparison changed its argument")
	}
	b.Labels["app"] = "api"
	if EqualIgnoreHash(a, b) {
		t.Fatal("templates with other labels compare equal")
	}
}
