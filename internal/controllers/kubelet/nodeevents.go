package kubelet

import (
	"fmt"

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
// status, enforces allocatable, and the controller registers the node.
func recordStartup(s *cluster.State, node *corev1.Node) {
	s.Record(source, nodeRef(node.Name), corev1.EventTypeNormal, StartingReason, StartingMessage)
	for _, reason := range startupStatuses {
		statusEvent(s, node.Name, reason)
	}
	s.Record(source, nodeRef(node.Name), corev1.EventTypeNormal, NodeAllocatableEnforcedReason, NodeAllocatableEnforcedMsg)
	s.Record(cluster.EventSource{Component: nodeControllerComponent}, cluster.Regarding("Node", "v1", node),
		corev1.EventTypeNormal, RegisteredNodeReason, fmt.Sprintf("Node %s event: Registered Node %s in Controller", node.Name, node.Name))
}

// recordReady records NodeReady the first time the kubelet sees its node
// Ready (the Ready setter's transition event).
func recordReady(s *cluster.State, node *corev1.Node) {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			if !s.HasEvent(Name, corev1.EventTypeNormal, NodeReadyReason, nodeRef(node.Name)) {
				statusEvent(s, node.Name, NodeReadyReason)
			}
			return
		}
	}
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
