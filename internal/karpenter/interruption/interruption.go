// Package interruption plays the AWS provider's interruption controller
// (aws/karpenter-provider-aws pkg/controllers/interruption) for the one
// message berth's user can send: the EC2 spot interruption warning. On a
// notice Karpenter publishes SpotInterrupted on the NodeClaim and its
// Node, puts the offering into the unavailable-offerings cache, deletes
// the NodeClaim (the termination finalizer cordons and drains the node)
// and publishes TerminatingOnInterruption. EC2 reclaims the instance two
// minutes after the notice; a node still there then stops reporting and
// goes with its pods. See docs/karpenter-interruption.md.
package interruption

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/events"
	"github.com/berth-sim/berth/internal/karpenter/podutil"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// Name is the controller's name (timers' owner).
const Name = "karpenter-interruption"

// ReclaimDelay is the spot interruption warning's lead time: EC2 takes the
// instance back two minutes after the notice.
const ReclaimDelay = 2 * time.Minute

// Event reasons and messages (pkg/controllers/interruption/events).
const (
	ReasonSpotInterrupted           = "SpotInterrupted"
	ReasonTerminatingOnInterruption = "TerminatingOnInterruption"
	// ReasonInstanceReclaimed is berth's: EC2 took a spot instance back
	// while its node was still there.
	ReasonInstanceReclaimed = "SpotInstanceReclaimed"

	messageSpotInterrupted      = "Spot interruption warning was triggered"
	messageTerminatingNodeClaim = "Interruption triggered termination for the NodeClaim"
	messageTerminatingNode      = "Interruption triggered termination for the Node"
)

// berthSource reports the events berth itself adds.
var berthSource = cluster.EventSource{Component: "berth", Plain: true}

// Controller implements sim.Controller.
type Controller struct {
	catalog *pools.Catalog
}

// New returns the interruption controller; catalog is the provisioner's and
// lifecycle's, so the interrupted offering is unavailable to both.
func New(catalog *pools.Catalog) *Controller {
	return &Controller{catalog: pools.SharedOrNew(catalog)}
}

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync implements sim.Controller: new notices are acted on, due ones
// reclaim their instance, finished ones are forgotten.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	aws := s.Karpenter.AWS
	if aws == nil || len(aws.Interruptions) == 0 {
		return false, nil
	}
	changed := false
	kept := aws.Interruptions[:0]
	for _, in := range aws.Interruptions {
		nc := claimByProviderID(s, in.ProviderID)
		if !in.Handled {
			in.Handled = true
			changed = true
			if nc != nil {
				c.handle(s, nc, nodeByProviderID(s, in.ProviderID))
			}
		}
		node := nodeByProviderID(s, in.ProviderID)
		if nc == nil && node == nil {
			// Karpenter terminated the instance before EC2 did.
			dropTimer(s, in.NodeClaim)
			changed = true
			continue
		}
		if s.Now.Before(in.ReclaimAt) {
			controllerutil.AddTimerOnce(s, cluster.Timer{At: in.ReclaimAt, Owner: Name, Object: in.NodeClaim, Settling: true})
			kept = append(kept, in)
			continue
		}
		reclaim(s, in, nc, node)
		changed = true
	}
	aws.Interruptions = kept
	return changed, nil
}

// handle is handleNodeClaim for a spot interruption message.
func (c *Controller) handle(s *cluster.State, nc *karpv1.NodeClaim, node *corev1.Node) {
	claimRef := cluster.Regarding("NodeClaim", karpv1.SchemeGroupVersion.String(), nc)
	publish(s, claimRef, ReasonSpotInterrupted, messageSpotInterrupted)
	if node != nil {
		publish(s, cluster.Regarding("Node", "v1", node), ReasonSpotInterrupted, messageSpotInterrupted)
	}
	zone, instanceType := nc.Labels[corev1.LabelTopologyZone], nc.Labels[corev1.LabelInstanceTypeStable]
	if zone != "" && instanceType != "" {
		c.catalog.MarkUnavailable(s, instanceType, zone, scheduling.CapacityTypeSpot)
	}
	if nc.DeletionTimestamp != nil {
		return // already going: no second delete, no second event
	}
	if !s.MarkDeleting(nc) {
		// A NodeClaim is no scheduling event.
		delete(s.NodeClaims, nc.Name)
		s.Bump()
	}
	publish(s, claimRef, ReasonTerminatingOnInterruption, messageTerminatingNodeClaim)
	if node != nil {
		publish(s, cluster.Regarding("Node", "v1", node), ReasonTerminatingOnInterruption, messageTerminatingNode)
	}
}

// reclaim is EC2 terminating the instance at the end of the warning: the
// kubelet stops, so the node turns NotReady; Karpenter's termination
// controller, finding the node not Ready and the instance gone, removes
// its finalizer without waiting for the drain, and the NodeClaim's
// finalizer goes with the instance. Pods still on the node are deleted
// with it (their controllers replace them).
func reclaim(s *cluster.State, in cluster.SpotInterruption, nc *karpv1.NodeClaim, node *corev1.Node) {
	instance := instanceID(in.ProviderID)
	if node != nil {
		notReady(s, node)
		s.Record(berthSource, cluster.Regarding("Node", "v1", node), corev1.EventTypeWarning, ReasonInstanceReclaimed,
			fmt.Sprintf("EC2 reclaimed spot instance %s %s after the interruption notice; %d pod(s) besides DaemonSet pods were still on the node",
				instance, ReclaimDelay, workloadPods(s, node.Name)))
		node.Finalizers = slices.DeleteFunc(node.Finalizers, func(f string) bool { return f == cluster.KarpenterTerminationFinalizer })
		s.DeleteNode(node.Name)
	}
	if nc != nil {
		if node == nil {
			s.Record(berthSource, cluster.Regarding("NodeClaim", karpv1.SchemeGroupVersion.String(), nc), corev1.EventTypeWarning,
				ReasonInstanceReclaimed, fmt.Sprintf("EC2 reclaimed spot instance %s %s after the interruption notice", instance, ReclaimDelay))
		}
		delete(s.NodeClaims, nc.Name)
		s.Bump()
	}
}

// workloadPods counts the live pods on the node that are neither
// DaemonSet nor mirror pods.
func workloadPods(s *cluster.State, node string) int {
	n := 0
	for _, p := range s.PodsOnNode(node) {
		if !cluster.IsTerminal(p) && !podutil.OwnedByDaemonSet(p) && !podutil.OwnedByNode(p) {
			n++
		}
	}
	return n
}

// notReady is the node lifecycle controller's view of a kubelet that
// stopped posting status.
func notReady(s *cluster.State, node *corev1.Node) {
	now := metav1.NewTime(s.Now)
	for i := range node.Status.Conditions {
		if c := &node.Status.Conditions[i]; c.Type == corev1.NodeReady && c.Status != corev1.ConditionUnknown {
			c.Status, c.Reason, c.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
			c.LastTransitionTime = now
		}
	}
	node.ResourceVersion = s.Bump()
}

func publish(s *cluster.State, ref corev1.ObjectReference, reason, message string) {
	events.Publish(s, events.Event{Regarding: ref, Type: corev1.EventTypeWarning, Reason: reason, Message: message,
		DedupeValues: []string{string(ref.UID)}})
}

func claimByProviderID(s *cluster.State, id string) *karpv1.NodeClaim {
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		if nc := s.NodeClaims[name]; nc.Status.ProviderID == id {
			return nc
		}
	}
	return nil
}

func nodeByProviderID(s *cluster.State, id string) *corev1.Node {
	for _, name := range cluster.SortedKeys(s.Nodes) {
		if n := s.Nodes[name]; n.Spec.ProviderID == id {
			return n
		}
	}
	return nil
}

// dropTimer forgets the reclaim wake-up of a notice that needs none now,
// so settling does not run the clock to it for nothing.
func dropTimer(s *cluster.State, object string) {
	s.Timers = slices.DeleteFunc(s.Timers, func(t cluster.Timer) bool { return t.Owner == Name && t.Object == object })
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}
