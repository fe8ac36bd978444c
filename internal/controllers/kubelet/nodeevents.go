package kubelet

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
)

// Node events the kubelet and the node lifecycle controller record
// (docs/node-lifecycle.md), with upstream's reasons and texts.
const (
	StartingReason                = "Starting"
	StartingMessage               = "Starting kubelet."
	NodeAllocatableEnforcedReason = "NodeAllocatableEnforced"
	NodeAllocatableEnforcedMsg    = "Updated Node Allocatable limit across pods"
	NodeReadyReason               = "NodeReady"
	NodeSchedulableReason         = "NodeSchedulable"
	NodeNotSchedulableReason      = "NodeNotSchedulable"
	RegisteredNodeReason          = "RegisteredNode"
	nodeControllerComponent       = "node-controller"
)

// startupStatuses are the pressure conditions' first status events, in the
// order the kubelet's status setters run.
var startupStatuses = []string{"NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"}

// nodeRef is the kubelet's reference to its node: it knows the name only,
// so the uid is the name too (kubectl's describe node looks both up).
func nodeRef(name string) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Node", Name: name, UID: types.UID(name)}
}

// statusEvent is the kubelet's "Node <name> status is now: <event>".
func statusEvent(s *cluster.State, node string, reason string) {
	s.Record(source, nodeRef(node), corev1.EventTypeNormal, reason, fmt.Sprintf("Node %s status is now: %s", node, reason))
}

// recordStartup records what a new node's kubelet and the node lifecycle
// controller report when it registers: the kubelet starts, posts its first
// status, enforces allocatable, and the controller registers the node. A
// lease recreated for an older node (deleted by hand, or a state saved
// before leases existed) records nothing: the kubelet did not restart.
func recordStartup(s *cluster.State, node *corev1.Node) {
	if !thisInstant(s, node.CreationTimestamp.Time) {
		return
	}
	s.Record(source, nodeRef(node.Name), corev1.EventTypeNormal, StartingReason, StartingMessage)
	for _, reason := range startupStatuses {
		statusEvent(s, node.Name, reason)
	}
	s.Record(source, nodeRef(node.Name), corev1.EventTypeNormal, NodeAllocatableEnforcedReason, NodeAllocatableEnforcedMsg)
	s.Record(cluster.EventSource{Component: nodeControllerComponent}, cluster.Regarding("Node", "v1", node),
		corev1.EventTypeNormal, RegisteredNodeReason, fmt.Sprintf("Node %s event: Registered Node %s in Controller", node.Name, node.Name))
}

// needsReadyEvent is true when the node turned Ready (or registered Ready)
// at this instant and its
// kubelet has not yet said so: NodeReady is the Ready setter's transition
// event, so a later pass (or deleted events) never records it again.
func needsReadyEvent(s *cluster.State, node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			now := thisInstant(s, c.LastTransitionTime.Time) || thisInstant(s, node.CreationTimestamp.Time)
			return c.Status == corev1.ConditionTrue && now &&
				!s.HasEvent(Name, corev1.EventTypeNormal, NodeReadyReason, nodeRef(node.Name))
		}
	}
	return false
}

// thisInstant reports whether t is the current virtual second (stored
// timestamps keep whole seconds).
func thisInstant(s *cluster.State, t time.Time) bool {
	return !t.Before(s.Now.Truncate(time.Second))
}

// RecordSchedulable records the kubelet's event for a change of
// spec.unschedulable (cordon, uncordon), unless its kubelet has stopped.
func RecordSchedulable(s *cluster.State, node *corev1.Node) {
	if Stopped(node) {
		return
	}
	reason := NodeSchedulableReason
	if node.Spec.Unschedulable {
		reason = NodeNotSchedulableReason
	}
	statusEvent(s, node.Name, reason)
}
