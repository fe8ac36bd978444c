package provisioning

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
	// The order is total (the uid breaks every tie), so any sort gives the
	// same queue; the keys are read once per pod rather than per comparison.
	type keyed struct {
		pod      *corev1.Pod
		cpu, mem resource.Quantity
	}
	keys := make([]keyed, len(pods))
	for i, p := range pods {
		r := data[p.UID].requests
		keys[i] = keyed{pod: p, cpu: r[corev1.ResourceCPU], mem: r[corev1.ResourceMemory]}
	}
	slices.SortFunc(keys, func(x, y keyed) int {
		if c := x.cpu.Cmp(y.cpu); c != 0 {
			return -c
		}
		if c := x.mem.Cmp(y.mem); c != 0 {
			return -c
		}
		a, b := x.pod, y.pod
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			if a.CreationTimestamp.Before(&b.CreationTimestamp) {
				return -1
			}
			return 1
		}
		return strings.Compare(string(a.UID), string(b.UID))
	})
	for i := range keys {
		pods[i] = keys[i].pod
	}
	return &queue{pods: pods, lastLen: map[types.UID]int{}}
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
