package cluster

import corev1 "k8s.io/api/core/v1"

// Writes the API server makes on behalf of its clients. Controllers, the
// scheduler and the CLI call these rather than editing the maps and
// resource versions themselves, so every client's write has one shape.

// DeletePod removes a pod at once. berth models termination as immediate:
// no graceful period, no Terminating phase. Removing a pod frees room on its
// node, so the scheduler is woken. Deleting a pod that is already gone does
// nothing.
func (s *State) DeletePod(pod *corev1.Pod) {
	key := Key(pod.Namespace, pod.Name)
	if _, ok := s.Pods[key]; !ok {
		return
	}
	delete(s.Pods, key)
	s.Bump()
	s.NoteChange()
}

// BindPod is the pods/binding subresource: the pod is assigned to node in
// one write, and the scheduler is woken since the node's room has changed.
func (s *State) BindPod(pod *corev1.Pod, node string) {
	pod.Spec.NodeName = node
	pod.ResourceVersion = s.Bump()
	s.NoteChange()
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
