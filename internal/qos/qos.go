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
	// Only cpu and memory count, so the sums are two fields each rather
	// than maps, and the containers are read in place: admission
	// classifies every pod it creates, and building two maps and a copy
	// of the container list per pod was a quarter of the bytes a created
	// pod cost (docs/simulation-speed.md#pod-creation-session-24).
	var requests, limits sums
	isGuaranteed := true
	if pod.Spec.Resources != nil {
		requests.add(pod.Spec.Resources.Requests)
		limits.add(pod.Spec.Resources.Limits)
		if len(pod.Spec.Resources.Limits) < 2 || !hasBoth(pod.Spec.Resources.Limits) {
			isGuaranteed = false
		}
	} else {
		for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
			for i := range list {
				r := &list[i].Resources
				requests.add(r.Requests)
				limits.add(r.Limits)
				if !hasBoth(r.Limits) {
					isGuaranteed = false
				}
			}
		}
	}
	if requests.empty() && limits.empty() {
		return corev1.PodQOSBestEffort
	}
	if isGuaranteed {
		// Every requested resource is limited at the same amount.
		if requests.hasCPU && (!limits.hasCPU || limits.cpu.Cmp(requests.cpu) != 0) ||
			requests.hasMemory && (!limits.hasMemory || limits.memory.Cmp(requests.memory) != 0) {
			isGuaranteed = false
		}
	}
	if isGuaranteed && requests.count() == limits.count() {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// sums adds up the positive cpu and memory amounts of resource lists; a
// resource is present once some list had a positive amount of it.
type sums struct {
	cpu, memory       resource.Quantity
	hasCPU, hasMemory bool
}

func (s *sums) add(from corev1.ResourceList) {
	for name, q := range from {
		if q.Sign() != 1 {
			continue
		}
		switch name {
		case corev1.ResourceCPU:
			s.cpu.Add(q)
			s.hasCPU = true
		case corev1.ResourceMemory:
			s.memory.Add(q)
			s.hasMemory = true
		}
	}
}

func (s *sums) empty() bool { return !s.hasCPU && !s.hasMemory }

func (s *sums) count() int {
	n := 0
	if s.hasCPU {
		n++
	}
	if s.hasMemory {
		n++
	}
	return n
}

func hasBoth(l corev1.ResourceList) bool {
	cpu, okc := l[corev1.ResourceCPU]
	mem, okm := l[corev1.ResourceMemory]
	return okc && okm && !cpu.IsZero() && !mem.IsZero()
}
