package provisioning

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/karpenter/instancetype"
)

// limitCache keeps, per pool, the instance types within what is left of
// the pool's limits. Every pod that fits no in-flight claim asks again,
// but the remainder only changes when a NodeClaim of the pool is created,
// and then it is a new list (subtract and subtractMax never change one in
// place), so the answer holds while the list is the same one
// (docs/karpenter-provisioning.md#speed-without-different-answers).
type limitCache map[*nodePoolTemplate]limitEntry

type limitEntry struct {
	remaining corev1.ResourceList
	its       instancetype.InstanceTypes
}

// withinLimits is filterByRemainingResources(t.instanceTypes, remaining), kept.
func (c limitCache) withinLimits(t *nodePoolTemplate, remaining corev1.ResourceList) instancetype.InstanceTypes {
	if e, ok := c[t]; ok && sameList(e.remaining, remaining) {
		return e.its
	}
	its := filterByRemainingResources(t.instanceTypes, remaining)
	c[t] = limitEntry{remaining: remaining, its: its}
	return its
}

// sameList tells whether two resource lists are the same map.
func sameList(a, b corev1.ResourceList) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
