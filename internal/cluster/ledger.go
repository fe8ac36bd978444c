package cluster

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// NodeLife is the cost ledger's record of a node that is gone: what it was
// (labels, provider ID, capacity: everything a price depends on) and when
// it lived. Live nodes need no record; their life runs from their creation
// timestamp to now. `berth cost` prices both (docs/cost.md#the-ledger).
type NodeLife struct {
	Name       string            `json:"name"`
	Start      time.Time         `json:"start"`
	End        time.Time         `json:"end"`
	Labels     map[string]string `json:"labels,omitempty"`
	ProviderID string            `json:"providerID,omitempty"`
	// Capacity is the node's cpu and memory: a Fargate node's size, which
	// is what Fargate bills.
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Allocatable is kept so that roll-ups can still show the node's size.
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// FargateProfile is the profile of the pod a Fargate node ran.
	FargateProfile string `json:"fargateProfile,omitempty"`
}

// recordNodeEnd appends the ledger entry of node, which is being deleted now.
func (s *State) recordNodeEnd(node *corev1.Node) {
	life := NodeLife{
		Name:        node.Name,
		Start:       node.CreationTimestamp.Time,
		End:         s.Now,
		Labels:      maps.Clone(node.Labels),
		ProviderID:  node.Spec.ProviderID,
		Capacity:    cpuMemory(node.Status.Capacity),
		Allocatable: cpuMemory(node.Status.Allocatable),
	}
	if life.Start.IsZero() || life.Start.After(s.Now) {
		life.Start = s.Now
	}
	for _, uid := range SortedKeys(s.Fargate.Pods) {
		if rec := s.Fargate.Pods[uid]; rec.Node == node.Name && rec.Profile != "" {
			life.FargateProfile = rec.Profile
			break
		}
	}
	s.NodeLedger = append(s.NodeLedger, life)
}

// cpuMemory keeps the cpu and memory of a resource list.
func cpuMemory(l corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := l[name]; ok {
			out[name] = q.DeepCopy()
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
