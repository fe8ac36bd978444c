package controllerutil

import (
	"math/rand/v2"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
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

// plainEqualIgnoreHash is the comparison on deep copies that
// EqualIgnoreHash replaced (session 24).
func plainEqualIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return apiequality.Semantic.DeepEqual(a, b)
}

// TestEqualIgnoreHashMatchesPlain compares both on random template pairs:
// nil, empty and hash-only label maps, labels differing in a key or a
// value, annotations, and specs that differ or not.
func TestEqualIgnoreHashMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	labels := func() map[string]string {
		switch rng.IntN(5) {
		case 0:
			return nil
		case 1:
			return map[string]string{}
		}
		m := map[string]string{}
		for _, k := range []string{"app", "tier", appsv1.DefaultDeploymentUniqueLabelKey} {
			if rng.IntN(2) == 0 {
				m[k] = []string{"a", "b"}[rng.IntN(2)]
			}
		}
		return m
	}
	template := func() *corev1.PodTemplateSpec {
		t := &corev1.PodTemplateSpec{}
		t.Labels = labels()
		if rng.IntN(3) == 0 {
			t.Annotations = map[string]string{"note": "x"}
		}
		t.Spec.Containers = []corev1.Container{{Name: "app", Image: []string{"nginx", "redis"}[rng.IntN(2)]}}
		if rng.IntN(3) == 0 {
			t.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse([]string{"100m", "0.1"}[rng.IntN(2)])}
		}
		return t
	}
	answers := map[bool]int{}
	for i := 0; i < 5000; i++ {
		a, b := template(), template()
		if rng.IntN(3) == 0 {
			b = a.DeepCopy()
			b.Labels = labels()
		}
		got, want := EqualIgnoreHash(a, b), plainEqualIgnoreHash(a, b)
		if got != want {
			t.Fatalf("pair %d: %v vs %v: got %v, want %v", i, a, b, got, want)
		}
		answers[want]++
	}
	if answers[true] == 0 || answers[false] == 0 {
		t.Fatalf("one answer only: %v", answers)
	}
}
