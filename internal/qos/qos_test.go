package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPodQOSClass(t *testing.T) {
	rl := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	ctr := func(req, lim corev1.ResourceList) corev1.Container {
		return corev1.Container{Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	for _, tc := range []struct {
		name string
		pod  corev1.PodSpec
		want corev1.PodQOSClass
	}{
		{"none", corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil)}}, corev1.PodQOSBestEffort},
		{"equal", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("1", "1Gi"), rl("1", "1Gi"))}}, corev1.PodQOSGuaranteed},
		{"cpu only", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("1", ""), rl("1", ""))}}, corev1.PodQOSBurstable},
		{"request below limit", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("500m", "1Gi"), rl("1", "1Gi"))}}, corev1.PodQOSBurstable},
		{"pod-level equal", corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: rl("1", "1Gi"), Limits: rl("1", "1Gi")},
			Containers: []corev1.Container{ctr(nil, nil)}}, corev1.PodQOSGuaranteed},
		{"pod-level cpu only", corev1.PodSpec{Resources: &corev1.ResourceRequirements{Limits: rl("1", "")},
			Containers: []corev1.Container{ctr(rl("1", "1Gi"), rl("1", "1Gi"))}}, corev1.PodQOSBurstable},
	} {
		if got := PodQOSClass(&corev1.Pod{Spec: tc.pod}); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}
