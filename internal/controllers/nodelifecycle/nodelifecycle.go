// Package nodelifecycle models the part of the node lifecycle controller
// (pkg/controller/nodelifecycle) that berth's node operations do not do
// themselves: once a node's Ready condition is no longer True, every pod
// bound to it is marked not ready (controller/util/node MarkPodsNotReady),
// so workload controllers and disruption budgets count it as unhealthy
// before the taint-eviction controller removes it.
//
// The node's conditions and unreachable taints are written by whoever makes
// the node fail (berth node fail); this controller only reacts to them.
package nodelifecycle

import (
	"slices"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Name is the controller's name.
const Name = "node-lifecycle-controller"

// EventComponent is the node lifecycle controller's event source component.
const EventComponent = "node-controller"

// Pod event texts (controller/util/node MarkPodsNotReady).
const (
	NodeNotReadyReason  = "NodeNotReady"
	NodeNotReadyMessage = "Node is not ready"
)

var source = cluster.EventSource{Component: EventComponent}

// Controller implements sim.Controller.
type Controller struct{}

// New returns the node lifecycle controller model.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync marks the pods of every node whose Ready condition is present and not
// True. Upstream does this on the node's transition and again on any update
// of a pod bound to such a node, so the level-triggered check here lands in
// the same place; a pod already at Ready=False is left alone, which makes it
// happen once.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	// Only pods on not-ready nodes are looked at: nothing is sorted or
	// grouped while every node is Ready (docs/simulation-speed.md).
	notReady := map[string]bool{}
	for name, node := range s.Nodes {
		if NodeNotReady(node) {
			notReady[name] = true
		}
	}
	if len(notReady) == 0 {
		return false, nil
	}
	var keys []string
	for k, p := range s.Pods {
		if notReady[p.Spec.NodeName] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	podsByNode := map[string][]*corev1.Pod{}
	for _, k := range keys {
		p := s.Pods[k]
		podsByNode[p.Spec.NodeName] = append(podsByNode[p.Spec.NodeName], p)
	}
	changed := false
	for _, nk := range cluster.SortedKeys(s.Nodes) {
		node := s.Nodes[nk]
		if !notReady[nk] {
			continue
		}
		for _, p := range podsByNode[node.Name] {
			if markPodNotReady(s, p) {
				changed = true
			}
		}
	}
	return changed, nil
}

// NodeNotReady reports whether the node has a Ready condition that is False
// or Unknown. A node without one has not been observed yet: upstream skips it.
func NodeNotReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return false
}

// markPodNotReady flips only the pod's existing Ready condition to False, as
// MarkPodsNotReady does through UpdatePodCondition: reason, message and
// lastProbeTime are kept, lastTransitionTime moves to now, ContainersReady
// and the container statuses are not touched. A pod without a Ready
// condition (not yet started by its kubelet) is skipped.
func markPodNotReady(s *cluster.State, pod *corev1.Pod) bool {
	cond := controllerutil.GetPodCondition(&pod.Status, corev1.PodReady)
	if cond == nil || cond.Status == corev1.ConditionFalse {
		return false
	}
	// Upstream records the event against its copy from before the update.
	ref := cluster.Regarding("Pod", "v1", pod)
	cond.Status = corev1.ConditionFalse
	cond.LastTransitionTime = metav1.NewTime(s.Now)
	pod.ResourceVersion = s.Bump()
	s.Record(source, ref, corev1.EventTypeWarning, NodeNotReadyReason, NodeNotReadyMessage)
	return true
}
