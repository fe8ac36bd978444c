package framework

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// PodInfoCache builds PodInfos like NewPodInfo, computing the resource
// sums once per distinct set of requests (docs/scheduler.md#session-24-queue).
//
// A Deployment's pods carry the same requests, and NewPodInfo builds two
// resource lists per pod (the effective request and the one with the
// scoring defaults): at 100,000 pods that was 0.46 GB allocated and half a
// second. The sums depend only on the containers' and init containers'
// requests, the init containers' restart policies, the pod overhead and,
// with pod-level resources enabled, the pod's own requests. The cache
// compares exactly those inputs, never the owner or the pod's name, so
// two pods share sums only when the computation would see the same
// numbers. Pods with pod-level requests are not cached (rare, and their
// sums also depend on the feature gate).
//
// The zero value is ready to use; it is not safe for concurrent use.
type PodInfoCache struct {
	podLevel bool
	entries  map[uint64][]*requestSums
	size     int
	// last is the latest entry used: pods come in runs of one owner.
	last *requestSums
}

// requestSums is one distinct set of inputs, copied, and its sums.
type requestSums struct {
	containers []v1.ResourceList
	inits      []initRequests
	overhead   v1.ResourceList

	requests        Resource
	nonZeroMilliCPU int64
	nonZeroMemory   int64
}

type initRequests struct {
	requests    v1.ResourceList
	restartable bool
}

// maxRequestSums bounds the cache: past it, the cache starts over. A
// cluster has far fewer distinct request shapes than this.
const maxRequestSums = 4096

// New returns the PodInfo of pod, as NewPodInfo(pod, podLevelResources).
func (c *PodInfoCache) New(pod *v1.Pod, podLevelResources bool) *PodInfo {
	if podLevelResources && resourcehelper.IsPodLevelRequestsSet(pod) {
		return NewPodInfo(pod, podLevelResources)
	}
	if c.entries == nil || c.podLevel != podLevelResources || c.size >= maxRequestSums {
		c.entries, c.podLevel, c.size, c.last = map[uint64][]*requestSums{}, podLevelResources, 0, nil
	}
	sums := c.last
	if sums == nil || !sums.matches(pod) {
		sums = nil
		h := hashRequestInputs(pod)
		for _, e := range c.entries[h] {
			if e.matches(pod) {
				sums = e
				break
			}
		}
		if sums == nil {
			full := NewPodInfo(pod, podLevelResources)
			sums = newRequestSums(pod, full)
			c.entries[h] = append(c.entries[h], sums)
			c.size++
			c.last = sums
			return full
		}
		c.last = sums
	}
	pi := &PodInfo{Pod: pod, Requests: sums.requests.cloneValue(),
		NonZeroMilliCPU: sums.nonZeroMilliCPU, NonZeroMemory: sums.nonZeroMemory}
	pi.parseAffinity()
	return pi
}

func newRequestSums(pod *v1.Pod, pi *PodInfo) *requestSums {
	e := &requestSums{requests: pi.Requests.cloneValue(),
		nonZeroMilliCPU: pi.NonZeroMilliCPU, nonZeroMemory: pi.NonZeroMemory,
		overhead: pod.Spec.Overhead.DeepCopy()}
	e.containers = make([]v1.ResourceList, len(pod.Spec.Containers))
	for i := range pod.Spec.Containers {
		e.containers[i] = pod.Spec.Containers[i].Resources.Requests.DeepCopy()
	}
	e.inits = make([]initRequests, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		e.inits[i] = initRequests{requests: ic.Resources.Requests.DeepCopy(), restartable: restartable(ic)}
	}
	return e
}

func restartable(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// matches reports whether the pod's inputs equal the entry's: the same
// containers in the same order, each naming the same resources with
// numerically equal quantities (the sums are of numbers).
func (e *requestSums) matches(pod *v1.Pod) bool {
	if len(e.containers) != len(pod.Spec.Containers) || len(e.inits) != len(pod.Spec.InitContainers) ||
		!sameRequests(e.overhead, pod.Spec.Overhead) {
		return false
	}
	for i := range e.containers {
		if !sameRequests(e.containers[i], pod.Spec.Containers[i].Resources.Requests) {
			return false
		}
	}
	for i := range e.inits {
		ic := &pod.Spec.InitContainers[i]
		if e.inits[i].restartable != restartable(ic) || !sameRequests(e.inits[i].requests, ic.Resources.Requests) {
			return false
		}
	}
	return true
}

// sameRequests: the same resource names (presence matters: a missing cpu
// or memory request takes the scoring default) and equal quantities.
func sameRequests(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok || qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
}

// hashRequestInputs hashes what matches compares; equal inputs hash
// alike (quantities by their milli value), and a collision only costs a
// comparison.
func hashRequestInputs(pod *v1.Pod) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		h ^= v
		h *= 1099511628211
	}
	list := func(rl v1.ResourceList) {
		// Map order varies: combine the entries with a sum.
		var sum uint64
		for name, q := range rl {
			sum += hashString(string(name)) ^ uint64(q.MilliValue())*0x9e3779b97f4a7c15
		}
		mix(uint64(len(rl)))
		mix(sum)
	}
	mix(uint64(len(pod.Spec.Containers)))
	for i := range pod.Spec.Containers {
		list(pod.Spec.Containers[i].Resources.Requests)
	}
	mix(uint64(len(pod.Spec.InitContainers)))
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		if restartable(ic) {
			mix(1)
		}
		list(ic.Resources.Requests)
	}
	list(pod.Spec.Overhead)
	return h
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// namesCPUAndMemory reports whether every container and init container
// requests cpu and memory explicitly. The scoring defaults only fill
// missing requests, so for such a pod the sums with defaults are the
// effective request itself and NewPodInfo computes them once.
func namesCPUAndMemory(pod *v1.Pod) bool {
	for _, list := range [2][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			r := list[i].Resources.Requests
			if _, ok := r[v1.ResourceCPU]; !ok {
				return false
			}
			if _, ok := r[v1.ResourceMemory]; !ok {
				return false
			}
		}
	}
	return true
}
