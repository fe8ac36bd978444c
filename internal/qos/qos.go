// Package qos classifies pods into QoS classes. Admission stamps the class
// on create and describe falls back to it, so both read this one copy.
package qos

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// PodQOSClass classifies a pod by its cpu and memory requests and limits
// (pkg/apis/core/v1/helper/qos ComputePodQOS): pod-level resources, when
// set, stand for the containers'; BestEffort when none are set, Guaranteed
// when cpu and memory are both limited and requests equal limits.
func PodQOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	supported := func(n corev1.ResourceName) bool { return n == corev1.ResourceCPU || n == corev1.ResourceMemory }
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	zero := resource.Quantity{}
	isGuaranteed := true
	add := func(into corev1.ResourceList, from corev1.ResourceList) {
		for name, q := range from {
			if !supported(name) || q.Cmp(zero) != 1 {
				continue
			}
			cur := into[name]
			cur.Add(q)
			into[name] = cur
		}
	}
	var all []corev1.Container
	all = append(all, pod.Spec.Containers...)
	all = append(all, pod.Spec.InitContainers...)
	if pod.Spec.Resources != nil {
		add(requests, pod.Spec.Resources.Requests)
		add(limits, pod.Spec.Resources.Limits)
		if len(pod.Spec.Resources.Limits) < 2 || !hasBoth(pod.Spec.Resources.Limits) {
			isGuaranteed = false
		}
	} else {
		for _, c := range all {
			add(requests, c.Resources.Requests)
			add(limits, c.Resources.Limits)
			if !hasBoth(c.Resources.Limits) {
				isGuaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if isGuaranteed {
		for name, req := range requests {
			if l, ok := limits[name]; !ok || l.Cmp(req) != 0 {
				isGuaranteed = false
				break
			}
		}
	}
	if isGuaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

func hasBoth(l corev1.ResourceList) bool {
	cpu, okc := l[corev1.ResourceCPU]
	mem, okm := l[corev1.ResourceMemory]
	return okc && okm && !cpu.IsZero() && !mem.IsZero()
}
