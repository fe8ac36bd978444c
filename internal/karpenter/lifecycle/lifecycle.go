// Package lifecycle is what happens to a Karpenter NodeClaim after the
// provisioner created it: the AWS launch (instance selection), the node's
// registration, its initialization, and termination with drain. It plays
// sigs.k8s.io/karpenter v1.6 pkg/controllers/nodeclaim/lifecycle (launch.go,
// registration.go, initialization.go), pkg/controllers/nodeclaim/lifecycle
// finalize and pkg/controllers/node/termination, with the AWS provider's
// pkg/providers/instance (filters, capacity type) and pkg/cloudprovider
// (labels of the launched NodeClaim) on the v1.6 line, in virtual time.
// See docs/karpenter-lifecycle.md.
package lifecycle

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/events"
	"github.com/berth-sim/berth/internal/karpenter/pools"
)

// Name is the controller's name; Component is the reporting component of
// its events, as Karpenter's recorder writes it.
const (
	Name      = "karpenter-lifecycle"
	Component = "karpenter"
)

// The boot model (docs/karpenter-lifecycle.md#boot-model).
const (
	// LaunchDelay is creation to Launched: the CreateFleet (type instant)
	// round trip, which returns the instance in a few seconds.
	LaunchDelay = 3 * time.Second
	// RegistrationDelay is Launched to the kubelet's Node object: EC2 boot,
	// the AMI's bootstrap (nodeadm on AL2023) and the kubelet joining.
	RegistrationDelay = 30 * time.Second
	// StartupTaintRemovalDelay is how long after registration the agent the
	// startup taints wait for (a CNI, a device plugin) removes them; berth
	// plays that agent.
	StartupTaintRemovalDelay = 5 * time.Second
	// LaunchRetryInterval is how often a launch that failed with an error
	// other than insufficient capacity is tried again (upstream's failure
	// back-off grows from 1 s to 1 min).
	LaunchRetryInterval = 10 * time.Second
	// RegistrationTTL is how long a NodeClaim may stay unregistered
	// (lifecycle/liveness.go registrationTTL).
	RegistrationTTL = 15 * time.Minute
	// DrainRetryInterval is how often a drain that an eviction could not
	// finish is tried again: the eviction queue's back-off ceiling (10 s).
	DrainRetryInterval = 10 * time.Second
)

// Condition types, finalizer, taints and labels (pkg/apis/v1).
const (
	ConditionLaunched            = "Launched"
	ConditionRegistered          = "Registered"
	ConditionInitialized         = "Initialized"
	ConditionReady               = "Ready"
	ConditionDrained             = "Drained"
	ConditionVolumesDetached     = "VolumesDetached"
	ConditionInstanceTerminating = "InstanceTerminating"
	ConditionDisruptionReason    = "DisruptionReason"

	TerminationFinalizer = cluster.KarpenterTerminationFinalizer
	DisruptedTaintKey    = karpv1.Group + "/disrupted"
	// DoNotDisruptAnnotation on a pod keeps Karpenter from evicting it.
	DoNotDisruptAnnotation = karpv1.Group + "/do-not-disrupt"
)

// DisruptedNoScheduleTaint is put on nodes being terminated.
var DisruptedNoScheduleTaint = corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}

// Event reasons (pkg/events/reason.go).
const (
	ReasonInsufficientCapacityError = "InsufficientCapacityError"
	ReasonEvicted                   = "Evicted"
	ReasonFailedDraining            = "FailedDraining"
)

// publish records an event unless the same reason was published for the
// same object within Karpenter's dedupe timeout; it reports whether it
// recorded one.
func publish(s *cluster.State, ref corev1.ObjectReference, eventType, reason, message string) bool {
	return events.Publish(s, events.Event{Regarding: ref, Type: eventType, Reason: reason, Message: message,
		DedupeValues: []string{string(ref.UID), ref.Namespace + "/" + ref.Name}})
}

// Controller implements sim.Controller.
type Controller struct {
	catalog *pools.Catalog
}

// New returns the lifecycle controller; catalog lists the pools' instance
// types (share it with the provisioner so both see the same unavailable
// offerings).
func New(catalog *pools.Catalog) *Controller {
	return &Controller{catalog: pools.SharedOrNew(catalog)}
}

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync implements sim.Controller: every NodeClaim moves on as far as the
// clock allows, then every Karpenter node being deleted is drained.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	changed := false
	var list []*pools.Pool
	for _, key := range cluster.CreationOrder(s, s.NodeClaims) {
		nc, ok := s.NodeClaims[key]
		if !ok {
			continue
		}
		if nc.DeletionTimestamp != nil {
			changed = c.finalizeClaim(s, nc) || changed
			continue
		}
		if list == nil {
			list = pools.List(s)
		}
		ch, err := c.reconcile(s, nc, list)
		if err != nil {
			return changed, fmt.Errorf("nodeclaim %s: %w", nc.Name, err)
		}
		changed = ch || changed
	}
	var claims map[types.UID]bool
	for _, name := range cluster.SortedKeys(s.Nodes) {
		node, ok := s.Nodes[name]
		if !ok || !slices.Contains(node.Finalizers, TerminationFinalizer) {
			continue
		}
		if node.DeletionTimestamp == nil {
			// The NodeClaim owning it went without a finalize (it cannot
			// here, but a state may say so): Karpenter's garbage collection
			// removes such a node.
			if claims == nil {
				claims = map[types.UID]bool{}
				for _, nc := range s.NodeClaims {
					claims[nc.UID] = true
				}
			}
			if ref := claimRef(node); ref != nil && !claims[ref.UID] {
				changed = s.MarkDeleting(node) || changed
			} else {
				continue
			}
		}
		changed = c.finalizeNode(s, node) || changed
	}
	return changed, nil
}

// reconcile is the lifecycle controller's pass over a live NodeClaim:
// finalizer, launch, registration, initialization.
func (c *Controller) reconcile(s *cluster.State, nc *karpv1.NodeClaim, list []*pools.Pool) (bool, error) {
	changed := false
	if !slices.Contains(nc.Finalizers, TerminationFinalizer) {
		nc.Finalizers = append(nc.Finalizers, TerminationFinalizer)
		changed = true
	}
	for _, t := range []string{ConditionLaunched, ConditionRegistered, ConditionInitialized} {
		if FindCondition(nc, t) == nil {
			SetCondition(s, nc, t, metav1.ConditionUnknown, "AwaitingReconciliation", "object is awaiting reconciliation")
			changed = true
		}
	}
	if changed {
		write(s, nc)
	}
	if reg := FindCondition(nc, ConditionRegistered); reg.Status != metav1.ConditionTrue {
		// Liveness: a claim not registered 15 minutes after it was
		// created is deleted (only a launch that keeps failing gets here).
		if !s.Now.Before(reg.LastTransitionTime.Add(RegistrationTTL)) {
			return s.MarkDeleting(nc) || changed, nil
		}
	}
	if !IsTrue(nc, ConditionLaunched) {
		due := nc.CreationTimestamp.Add(LaunchDelay)
		if s.Now.Before(due) {
			wake(s, due, nc.Name)
			return changed, nil
		}
		launched, ch := c.launch(s, nc, list)
		if !launched {
			return ch || changed, nil
		}
		changed = true
	}
	if !IsTrue(nc, ConditionRegistered) {
		due := FindCondition(nc, ConditionLaunched).LastTransitionTime.Add(RegistrationDelay)
		if s.Now.Before(due) {
			wake(s, due, nc.Name)
			return changed, nil
		}
		if err := register(s, nc); err != nil {
			// The instance cannot join (no address left in the subnet, a
			// name taken): it stays unregistered, and the registration
			// timeout removes the NodeClaim, as for a node that never joins.
			publish(s, cluster.Regarding("NodeClaim", karpv1.SchemeGroupVersion.String(), nc), corev1.EventTypeWarning,
				"FailedRegistration", fmt.Sprintf("NodeClaim %s event: %s", nc.Name, err))
			return changed, nil
		}
		changed = true
	}
	node, ok := s.Nodes[nc.Status.NodeName]
	if !ok || node.DeletionTimestamp != nil {
		// Deleted behind Karpenter's back (berth's delete of a node without
		// its finalizer): the instance goes and the NodeClaim with it.
		if !ok {
			return s.MarkDeleting(nc) || changed, nil
		}
		return changed, nil
	}
	if !IsTrue(nc, ConditionInitialized) {
		changed = initialize(s, nc, node) || changed
	}
	return changed, nil
}

// wake asks for a Sync at t.
func wake(s *cluster.State, t time.Time, object string) {
	controllerutil.AddTimerOnce(s, cluster.Timer{At: t, Owner: Name, Object: object, Settling: true})
}

// write records a NodeClaim update.
func write(s *cluster.State, nc *karpv1.NodeClaim) {
	nc.ResourceVersion = s.Bump()
}

// writeNode records a Node update, old being a copy from before it; it may
// change where pods fit (the scheduling queue hears of its update kinds).
func writeNode(s *cluster.State, old, node *corev1.Node) {
	node.ResourceVersion = s.Bump()
	s.NodeUpdated(old, node)
}

// FindCondition returns the NodeClaim's condition of type t, or nil.
func FindCondition(nc *karpv1.NodeClaim, t string) *metav1.Condition {
	for i := range nc.Status.Conditions {
		if nc.Status.Conditions[i].Type == t {
			return &nc.Status.Conditions[i]
		}
	}
	return nil
}

// IsTrue tells whether the NodeClaim's condition t is True.
func IsTrue(nc *karpv1.NodeClaim, t string) bool {
	c := FindCondition(nc, t)
	return c != nil && c.Status == metav1.ConditionTrue
}

// setTrue sets t True with the reason operatorpkg's SetTrue gives (the type).
func setTrue(s *cluster.State, nc *karpv1.NodeClaim, t string) bool {
	return SetCondition(s, nc, t, metav1.ConditionTrue, t, "")
}

// ClearCondition removes condition t, as operatorpkg's Clear does (the
// disruption controller clears Consolidatable); it reports a change.
func ClearCondition(nc *karpv1.NodeClaim, t string) bool {
	for i := range nc.Status.Conditions {
		if nc.Status.Conditions[i].Type == t {
			nc.Status.Conditions = append(nc.Status.Conditions[:i], nc.Status.Conditions[i+1:]...)
			return true
		}
	}
	return false
}

// readyDependents make up Ready (the NodeClaim's condition set).
var readyDependents = []string{ConditionLaunched, ConditionRegistered, ConditionInitialized}

// SetCondition sets one condition as operatorpkg's ConditionSet.Set does:
// the transition time moves only with the status (a dependent first seen
// takes the creation time), conditions are sorted by transition time with
// Ready last, and Ready is recomputed from the dependents. It reports a
// change; the caller writes the object.
func SetCondition(s *cluster.State, nc *karpv1.NodeClaim, t string, status metav1.ConditionStatus, reason, message string) bool {
	cond := metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: nc.Generation}
	old := FindCondition(nc, t)
	switch {
	case old == nil && slices.Contains(readyDependents, t) && status == metav1.ConditionUnknown:
		cond.LastTransitionTime = nc.CreationTimestamp
	case old != nil && old.Status == status:
		cond.LastTransitionTime = old.LastTransitionTime
	default:
		cond.LastTransitionTime = metav1.NewTime(s.Now)
	}
	if old != nil && *old == cond {
		return false
	}
	if old != nil {
		*old = cond
	} else {
		nc.Status.Conditions = append(nc.Status.Conditions, cond)
	}
	sort.SliceStable(nc.Status.Conditions, func(i, j int) bool {
		a, b := nc.Status.Conditions[i], nc.Status.Conditions[j]
		if a.Type == ConditionReady || b.Type == ConditionReady {
			return b.Type == ConditionReady && a.Type != ConditionReady
		}
		return a.LastTransitionTime.Before(&b.LastTransitionTime)
	})
	if t != ConditionReady && slices.Contains(readyDependents, t) {
		recomputeReady(s, nc)
	}
	return true
}

// recomputeReady is operatorpkg's root condition: True when every dependent
// is, else Unknown "ReconcilingDependents" (False "UnhealthyDependents" if
// one is False) listing the unhealthy ones.
func recomputeReady(s *cluster.State, nc *karpv1.NodeClaim) {
	var unhealthy []string
	status := metav1.ConditionUnknown
	for _, t := range readyDependents {
		c := FindCondition(nc, t)
		switch {
		case c == nil:
			continue
		case c.Status == metav1.ConditionFalse:
			status = metav1.ConditionFalse
		case c.Status == metav1.ConditionTrue:
			continue
		}
		unhealthy = append(unhealthy, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	if len(unhealthy) == 0 {
		SetCondition(s, nc, ConditionReady, metav1.ConditionTrue, ConditionReady, "")
		return
	}
	reason := "ReconcilingDependents"
	if status == metav1.ConditionFalse {
		reason = "UnhealthyDependents"
	}
	SetCondition(s, nc, ConditionReady, status, reason, strings.Join(unhealthy, ", "))
}

// claimRef is the node's owner reference to its NodeClaim.
func claimRef(node *corev1.Node) *metav1.OwnerReference {
	for i, r := range node.OwnerReferences {
		if r.Kind == "NodeClaim" && strings.HasPrefix(r.APIVersion, karpv1.Group+"/") {
			return &node.OwnerReferences[i]
		}
	}
	return nil
}

// claimForNode is the NodeClaim the node belongs to, by provider ID as
// Karpenter matches them, nil if there is none.
func claimForNode(s *cluster.State, node *corev1.Node) *karpv1.NodeClaim {
	for _, key := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[key]
		if nc.Status.ProviderID != "" && nc.Status.ProviderID == node.Spec.ProviderID {
			return nc
		}
	}
	return nil
}
