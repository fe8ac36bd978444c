package cluster

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Writes the API server makes on behalf of its clients. Controllers, the
// scheduler and the CLI call these rather than editing the maps and
// resource versions themselves, so every client's write has one shape.

// DeletePod removes a pod object at once: the final, zero-grace delete (see
// GracefulDeletePod for the usual path through Terminating). Removing a pod
// frees room on its node: an assigned pod's removal is a Pod/Delete event
// for the scheduling queue. Deleting a pod that is already gone does nothing.
func (s *State) DeletePod(pod *corev1.Pod) {
	key := Key(pod.Namespace, pod.Name)
	if _, ok := s.Pods[key]; !ok {
		return
	}
	delete(s.Pods, key)
	s.Bump()
	s.PodDeleted(pod)
}

// BindPod is the pods/binding subresource: the pod is assigned to node in
// one write, an assigned Pod/Add event for the scheduling queue.
func (s *State) BindPod(pod *corev1.Pod, node string) {
	pod.Spec.NodeName = node
	pod.ResourceVersion = s.Bump()
	s.bindsAndDeletes++
	s.AssignedPodAdded(pod)
}

// UpdatePodStatus is a write to the pods/status subresource: update edits
// the status and reports whether it changed anything; only a change is a
// write. It reports what update did.
func (s *State) UpdatePodStatus(pod *corev1.Pod, update func(*corev1.PodStatus) bool) bool {
	if !update(&pod.Status) {
		return false
	}
	pod.ResourceVersion = s.Bump()
	return true
}

// DeleteNode removes a node at once, with the pods bound to it (a shortcut
// for capacity providers that drained it first: the pod garbage collector's
// 40 s quarantine is modelled only for `berth delete node`, see
// docs/node-lifecycle.md#pods-on-lost-nodes), and drops it from
// the scheduler's node order; the cost ledger keeps its life
// (ledger.go). Deleting a node that is already gone does
// nothing.
func (s *State) DeleteNode(name string) {
	node, ok := s.Nodes[name]
	if !ok {
		return
	}
	s.RemoveNodeObject(node.Name)
	for _, p := range s.PodsOnNode(name) {
		s.DeletePod(p)
	}
}

// KarpenterTerminationFinalizer is the finalizer Karpenter puts on the
// NodeClaims and Nodes it manages (karpenter.sh/termination).
const KarpenterTerminationFinalizer = "karpenter.sh/termination"

// MarkDeleting is a DELETE of an object that carries Karpenter's termination
// finalizer: the API server only sets metadata.deletionTimestamp, and
// Karpenter's termination controller removes the object once it has drained
// and terminated it (docs/karpenter-lifecycle.md#termination). It reports
// false, doing nothing, for an object without that finalizer: the caller
// removes it as usual. berth models no other finalizer this way.
func (s *State) MarkDeleting(m metav1.Object) bool {
	if !slices.Contains(m.GetFinalizers(), KarpenterTerminationFinalizer) {
		return false
	}
	if m.GetDeletionTimestamp() == nil {
		now := metav1.NewTime(s.Now)
		m.SetDeletionTimestamp(&now)
		s.bindsAndDeletes++
		// Only the deletionTimestamp changes: no scheduling event (a node's
		// update kinds do not include it).
		m.SetResourceVersion(s.Bump())
	}
	return true
}
