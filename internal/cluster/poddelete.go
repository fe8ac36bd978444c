package cluster

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GracefulDeletePod is a DELETE of a pod without --force, the way the API
// server's pod strategy handles it (docs/node-lifecycle.md#graceful-termination):
// the grace period is gracePeriod when given, else the pod's
// terminationGracePeriodSeconds; a pod that is not bound to a node or has
// already finished goes at once, as does a grace period of 0. Otherwise the
// pod only gets metadata.deletionTimestamp (now plus the grace period) and
// deletionGracePeriodSeconds, and stays, Terminating, until its kubelet has
// stopped its containers (or the pod GC force-deletes it). A second delete
// may only shorten the grace period. It reports whether the pod object is
// gone.
func (s *State) GracefulDeletePod(pod *corev1.Pod, gracePeriod *int64) bool {
	key := Key(pod.Namespace, pod.Name)
	if cur, ok := s.Pods[key]; !ok || cur != pod {
		return true
	}
	period := int64(0)
	switch {
	case gracePeriod != nil:
		period = *gracePeriod
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || IsTerminal(pod) {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	if pod.DeletionTimestamp != nil {
		cur := pod.DeletionGracePeriodSeconds
		if cur == nil || *cur == 0 || period == 0 {
			s.DeletePod(pod)
			return true
		}
		if gracePeriod == nil || period >= *cur {
			return false // graceful deletion already pending
		}
		// Only shortening is allowed: move the deadline back, never before now.
		at := pod.DeletionTimestamp.Add(time.Duration(period-*cur) * time.Second)
		if at.Before(s.Now) {
			at, period = s.Now, 1
		}
		pod.DeletionTimestamp = &metav1.Time{Time: at}
		s.bindsAndDeletes++
		pod.DeletionGracePeriodSeconds = &period
		pod.ResourceVersion = s.Bump()
		return false
	}
	if period == 0 {
		s.DeletePod(pod)
		return true
	}
	at := metav1.NewTime(s.Now.Add(time.Duration(period) * time.Second))
	pod.DeletionTimestamp = &at
	s.bindsAndDeletes++
	pod.DeletionGracePeriodSeconds = &period
	if pod.Generation > 0 {
		pod.Generation++
	}
	pod.ResourceVersion = s.Bump()
	// Controllers watching the pod react to its deletion now (a ReplicaSet
	// creates the replacement); the scheduler still counts it on its node,
	// and the deletionTimestamp is a plain pod Update no scheduling plugin
	// registers: its Delete event comes when the object goes.
	return false
}

// ForceDeletePod is a DELETE with a zero grace period (what the kubelet
// sends once the containers have stopped, and the pod GC for pods whose
// kubelet is gone): the object goes at once.
func (s *State) ForceDeletePod(pod *corev1.Pod) {
	s.DeletePod(pod)
}

// RemoveNodeObject deletes the Node object alone, as `kubectl delete node`
// does: the pods bound to it stay until the pod garbage collector finds them
// orphaned (docs/node-lifecycle.md#pods-on-lost-nodes). The node leaves the
// scheduler's order and the cost ledger closes its life, as with DeleteNode.
func (s *State) RemoveNodeObject(name string) {
	node, ok := s.Nodes[name]
	if !ok {
		return
	}
	s.recordNodeEnd(node)
	delete(s.Nodes, name)
	order := s.Scheduler.NodeOrder[:0]
	for _, n := range s.Scheduler.NodeOrder {
		if n != name {
			order = append(order, n)
		}
	}
	s.Scheduler.NodeOrder = order
	s.Bump()
	s.NodeDeleted(node)
}
