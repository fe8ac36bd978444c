package lifecycle

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	"github.com/berth-sim/berth/internal/controllers/disruption"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/podutil"
)

// labelExcludeFromLB is set with the disrupted taint so load balancers stop
// sending traffic to the node.
const labelExcludeFromLB = corev1.LabelNodeExcludeBalancers

// finalizeClaim is the NodeClaim's finalizer (lifecycle controller
// finalize): a registered claim's Node is deleted first and drained by
// finalizeNode; once it is gone the instance is terminated and the
// finalizer removed (docs/karpenter-lifecycle.md#termination).
func (c *Controller) finalizeClaim(s *cluster.State, nc *karpv1.NodeClaim) bool {
	if !slices.Contains(nc.Finalizers, TerminationFinalizer) {
		removeClaim(s, nc)
		return true
	}
	if IsTrue(nc, ConditionRegistered) {
		if node, ok := s.Nodes[nc.Status.NodeName]; ok {
			if node.DeletionTimestamp != nil {
				return false
			}
			if !s.MarkDeleting(node) {
				s.DeleteNode(node.Name) // no finalizer: the API server removes it
			}
			return true
		}
	}
	terminateInstance(s, nc)
	return true
}

// terminateInstance is CloudProvider.Delete and the finalizer's removal.
// berth removes the NodeClaim at once; EC2's shutting-down phase, during
// which upstream keeps requeueing, is not modelled.
func terminateInstance(s *cluster.State, nc *karpv1.NodeClaim) {
	if nc.Status.ProviderID != "" {
		setTrue(s, nc, ConditionInstanceTerminating)
	}
	removeClaim(s, nc)
}

// finalizeNode is the node termination controller for a Node carrying the
// termination finalizer and a deletion timestamp: its NodeClaim is deleted,
// the node tainted karpenter.sh/disrupted:NoSchedule, drained in waves
// through the Eviction API, and then removed with its NodeClaim.
func (c *Controller) finalizeNode(s *cluster.State, node *corev1.Node) bool {
	changed := false
	nc := claimForNode(s, node)
	if nc != nil && nc.DeletionTimestamp == nil {
		changed = s.MarkDeleting(nc) || changed
	}
	changed = taintDisrupted(s, node) || changed
	if !c.drained(s, node, nc, &changed) {
		return changed
	}
	if nc != nil {
		setTrue(s, nc, ConditionDrained)
		setTrue(s, nc, ConditionVolumesDetached)
		write(s, nc)
	}
	s.DeleteNode(node.Name)
	if nc != nil {
		terminateInstance(s, nc)
	}
	return true
}

// taintDisrupted is Terminator.Taint: the disrupted taint replaces any taint
// of its key, and the node is excluded from load balancers.
func taintDisrupted(s *cluster.State, node *corev1.Node) bool {
	old := node.DeepCopy()
	changed := false
	if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&DisruptedNoScheduleTaint) }) {
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == DisruptedTaintKey })
		node.Spec.Taints = append(node.Spec.Taints, DisruptedNoScheduleTaint)
		changed = true
	}
	if node.Labels[labelExcludeFromLB] != "karpenter" {
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[labelExcludeFromLB] = "karpenter"
		changed = true
	}
	if changed {
		writeNode(s, old, node)
	}
	return changed
}

// drained is Terminator.Drain with the eviction queue: it reports whether
// no pod is left waiting for eviction. Otherwise it publishes
// FailedDraining, evicts the first non-empty wave (non-critical
// non-DaemonSet, non-critical DaemonSet, critical non-DaemonSet, critical
// DaemonSet). Evicted pods stay Terminating for their grace period and
// still count, so the next wave waits for them to be gone; berth moves on
// the instant the last one goes (upstream requeues every second).
func (c *Controller) drained(s *cluster.State, node *corev1.Node, nc *karpv1.NodeClaim, changed *bool) bool {
	waves := make([][]*corev1.Pod, 4)
	total := 0
	for _, p := range s.PodsOnNode(node.Name) {
		if cluster.IsTerminal(p) || !drainable(s, p) {
			continue
		}
		i := 0
		if isCritical(p) {
			i = 2
		}
		if podutil.OwnedByDaemonSet(p) {
			i++
		}
		waves[i] = append(waves[i], p)
		total++
	}
	if total == 0 {
		return true
	}
	ref := cluster.Regarding("Node", "v1", node)
	if publish(s, ref, corev1.EventTypeWarning, ReasonFailedDraining,
		fmt.Sprintf("Failed to drain node, %d pods are waiting to be evicted", total)) {
		*changed = true
	}
	if nc != nil && SetCondition(s, nc, ConditionDrained, metav1.ConditionUnknown, "Draining", "Draining") {
		write(s, nc)
		*changed = true
	}
	evicted := false
	for _, wave := range waves {
		if len(wave) == 0 {
			continue
		}
		for _, p := range wave {
			if !evictable(p) {
				continue // do-not-disrupt: the drain waits for it
			}
			err := disruption.Evict(s, p)
			var ee *disruption.EvictionError
			switch {
			case err == nil:
				evicted, *changed = true, true
				publish(s, cluster.Regarding("Pod", "v1", p), corev1.EventTypeNormal, ReasonEvicted,
					"Evicted pod: "+evictionReason(nc))
			case errors.As(err, &ee) && ee.Code == http.StatusTooManyRequests:
				if publish(s, ref, corev1.EventTypeWarning, ReasonFailedDraining,
					fmt.Sprintf("Failed to drain node, evicting pod violates a PDB (Pod=%s/%s)", p.Namespace, p.Name)) {
					*changed = true
				}
			}
		}
		break
	}
	if !evicted {
		// Blocked (PDB, do-not-disrupt): the change that unblocks it runs
		// the controllers anyway; the retry itself only fires under advance.
		controllerutil.AddTimerOnce(s, cluster.Timer{At: s.Now.Add(DrainRetryInterval), Owner: Name, Object: "node/" + node.Name})
	}
	return false
}

// evictionReason is the disruption reason of the claim, else "Forceful
// Termination" (a user's delete).
func evictionReason(nc *karpv1.NodeClaim) string {
	if nc != nil && IsTrue(nc, ConditionDisruptionReason) {
		return FindCondition(nc, ConditionDisruptionReason).Reason
	}
	return "Forceful Termination"
}

// drainable is pod.IsDrainable: not tolerating the disrupted taint, not a
// mirror pod, not stuck terminating a minute past its deletion time.
func drainable(s *cluster.State, p *corev1.Pod) bool {
	if toleratesDisrupted(p) || podutil.OwnedByNode(p) {
		return false
	}
	return p.DeletionTimestamp == nil || s.Now.Sub(p.DeletionTimestamp.Time) <= time.Minute
}

// evictable is pod.IsEvictable: active, drainable in kind, and not
// protected by karpenter.sh/do-not-disrupt.
func evictable(p *corev1.Pod) bool {
	return !cluster.IsTerminal(p) && p.DeletionTimestamp == nil && !toleratesDisrupted(p) && !podutil.OwnedByNode(p) &&
		p.Annotations[DoNotDisruptAnnotation] != "true"
}

func toleratesDisrupted(p *corev1.Pod) bool {
	return corev1helpers.TolerationsTolerateTaint(logr.Discard(), p.Spec.Tolerations, &DisruptedNoScheduleTaint, false)
}

func isCritical(p *corev1.Pod) bool {
	return p.Spec.PriorityClassName == "system-cluster-critical" || p.Spec.PriorityClassName == "system-node-critical"
}

// ToleratesDisrupted tells whether a pod tolerates the disrupted taint
// (such pods are neither drained nor checked against PDBs).
func ToleratesDisrupted(p *corev1.Pod) bool { return toleratesDisrupted(p) }
