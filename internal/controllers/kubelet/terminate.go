package kubelet

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// KillingContainerReason is the kubelet's event when it stops a container
// (pkg/kubelet/events KillingContainer).
const KillingContainerReason = "Killing"

// syncTerminating is the kubelet's side of graceful deletion
// (docs/node-lifecycle.md#graceful-termination): for each pod with a
// deletionTimestamp on a node whose kubelet is running, it records Killing
// for every running container when it first sees the pod, and removes the
// pod object (the kubelet's final zero-grace delete) once the containers
// have stopped. berth cannot know when a process exits on SIGTERM, so a pod
// with running containers takes its whole grace period, the longest a real
// one can take; a pod whose containers never started stops at once. A pod
// on a node whose kubelet has stopped stays Terminating: nobody is there to
// confirm it (the pod GC's out-of-service path and node deletion release it).
func syncTerminating(s *cluster.State, pods []*corev1.Pod) bool {
	changed := false
	for _, pod := range pods {
		node, ok := s.Nodes[pod.Spec.NodeName]
		if !ok || !nodeReporting(node) {
			continue
		}
		running := runningContainers(pod)
		ref := podRef(pod, "")
		if len(running) > 0 && !s.HasEvent(Name, corev1.EventTypeNormal, KillingContainerReason, ref) {
			for _, c := range running {
				s.Record(source, podRef(pod, c), corev1.EventTypeNormal, KillingContainerReason, fmt.Sprintf("Stopping container %s", c))
			}
			changed = true
		}
		if !stopsNow(s, pod) {
			wakeAt(s, pod.DeletionTimestamp.Time)
			continue
		}
		s.ForceDeletePod(pod)
		changed = true
	}
	return changed
}

// stopsNow reports whether a terminating pod's kubelet finishes it at this
// instant: its containers never started, or its grace period is over.
func stopsNow(s *cluster.State, pod *corev1.Pod) bool {
	if node, ok := s.Nodes[pod.Spec.NodeName]; !ok || !nodeReporting(node) {
		return false
	}
	return len(runningContainers(pod)) == 0 || !s.Now.Before(pod.DeletionTimestamp.Time)
}

// runningContainers lists, in spec order, the containers the kubelet has
// started (the ones it has to stop).
func runningContainers(pod *corev1.Pod) []string {
	var out []string
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil {
			out = append(out, cs.Name)
		}
	}
	return out
}
