package provisioning

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// queue holds the pods of one Solve: largest CPU request first, then
// memory, then the oldest, then by uid. A pod that failed goes to the back;
// popping a pod that was pushed when the queue had its current length
// means a whole round passed without progress, and the solve ends
// (docs/karpenter-provisioning.md#the-solve-loop).
type queue struct {
	pods    []*corev1.Pod
	lastLen map[types.UID]int
}

func newQueue(pods []*corev1.Pod, data map[types.UID]*podData) *queue {
	sort.Slice(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		ra, rb := data[a.UID].requests, data[b.UID].requests
		if c := cmpQuantity(ra, rb, corev1.ResourceCPU); c != 0 {
			return c > 0
		}
		if c := cmpQuantity(ra, rb, corev1.ResourceMemory); c != 0 {
			return c > 0
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.UID < b.UID
	})
	return &queue{pods: pods, lastLen: map[types.UID]int{}}
}

func cmpQuantity(a, b corev1.ResourceList, name corev1.ResourceName) int {
	qa, qb := a[name], b[name]
	return qa.Cmp(qb)
}

func (q *queue) pop() (*corev1.Pod, bool) {
	if len(q.pods) == 0 {
		return nil, false
	}
	p := q.pods[0]
	if q.lastLen[p.UID] == len(q.pods) {
		return nil, false
	}
	q.pods = q.pods[1:]
	return p, true
}

func (q *queue) push(p *corev1.Pod) {
	q.pods = append(q.pods, p)
	q.lastLen[p.UID] = len(q.pods)
}
