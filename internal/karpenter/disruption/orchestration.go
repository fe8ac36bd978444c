package disruption

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/events"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioner"
)

// Orchestration timing (docs/karpenter-disruption.md#orchestration).
const (
	// commandTimeout abandons a command whose replacements did not
	// initialize (Karpenter v1.0-v1.6's maxRetryDuration).
	commandTimeout = 10 * time.Minute
	// nominationWindow matches the provisioner's (2 x batch max).
	nominationWindow = 2 * provisioner.BatchMaxDuration
)

// title is the reason as Karpenter's events spell it (first letter up).
func title(reason karpv1.DisruptionReason) string { return sentence(string(reason)) }

// start is Queue.StartCommand: the candidates are tainted
// karpenter.sh/disrupted:NoSchedule and get DisruptionReason, the
// replacements are created, and the command waits in the queue; without
// replacements its candidates are deleted at once.
func (c *Controller) start(s *cluster.State, cmd *command) {
	for _, cand := range cmd.candidates {
		if !hasTaint(cand.node, lifecycle.DisruptedTaintKey) {
			old := cand.node.DeepCopy()
			cand.node.Spec.Taints = append(cand.node.Spec.Taints, lifecycle.DisruptedNoScheduleTaint)
			cand.node.ResourceVersion = s.Bump()
			s.NodeUpdated(old, cand.node)
		}
		if lifecycle.SetCondition(s, cand.claim, lifecycle.ConditionDisruptionReason, metav1.ConditionTrue, string(cmd.reason), string(cmd.reason)) {
			cand.claim.ResourceVersion = s.Bump()
		}
	}
	queued := cluster.KarpenterCommand{NodeClaims: cmd.claimNames(), Method: cmd.method, Reason: string(cmd.reason), Started: s.Now}
	all := pools.List(s)
	for _, repl := range cmd.replacements {
		p := pools.Of(all, map[string]string{repl.NodePool.PoolLabel: repl.NodePool.Name})
		if p == nil {
			continue
		}
		name, err := provisioner.CreateNodeClaim(s, p, repl)
		if err != nil {
			continue // a pool over its limits: the command waits for nothing
		}
		queued.Replacements = append(queued.Replacements, name)
		nominate(s, name)
		for _, pod := range repl.Pods {
			if _, moved := cmd.sim.Moved[cluster.Key(pod.Namespace, pod.Name)]; moved {
				continue
			}
			events.Publish(s, events.Event{Regarding: cluster.Regarding("Pod", "v1", pod), Type: corev1.EventTypeNormal, Reason: "Nominated",
				Message: "Pod should schedule on: nodeclaim/" + name, DedupeValues: []string{string(pod.UID)}})
		}
	}
	s.Karpenter.Disrupting = append(s.Karpenter.Disrupting, queued)
	c.progress(s)
}

func nominate(s *cluster.State, name string) {
	if s.Karpenter.Nominated == nil {
		s.Karpenter.Nominated = map[string]time.Time{}
	}
	s.Karpenter.Nominated[name] = s.Now.Add(nominationWindow)
}

// progress is the queue's reconcile over every command: once all its
// replacements are initialized its candidates are deleted (termination
// drains them); a replacement that disappeared, or ten minutes without
// readiness, abandons the command and untaints its candidates.
func (c *Controller) progress(s *cluster.State) bool {
	changed := false
	var keep []cluster.KarpenterCommand
	for _, cmd := range s.Karpenter.Disrupting {
		reason := karpv1.DisruptionReason(cmd.Reason)
		waiting, failed := false, false
		for _, name := range cmd.Replacements {
			nc := s.NodeClaims[name]
			if nc == nil || nc.DeletionTimestamp != nil {
				failed = true
				break
			}
			if lifecycle.IsTrue(nc, lifecycle.ConditionInitialized) {
				continue
			}
			events.Publish(s, events.Event{Regarding: claimRef(nc), Type: corev1.EventTypeNormal, Reason: "DisruptionLaunching",
				Message: "Launching NodeClaim: " + title(reason), DedupeValues: []string{string(nc.UID), string(reason)}})
			events.Publish(s, events.Event{Regarding: claimRef(nc), Type: corev1.EventTypeNormal, Reason: "DisruptionWaitingReadiness",
				Message: "Waiting on readiness to continue disruption", DedupeValues: []string{string(nc.UID)}})
			waiting = true
		}
		if !failed && waiting && s.Now.Sub(cmd.Started) > commandTimeout {
			failed = true
		}
		switch {
		case failed:
			abandon(s, cmd)
			changed = true
		case waiting:
			controllerutil.AddTimerOnce(s, cluster.Timer{At: cmd.Started.Add(commandTimeout + time.Second), Owner: Name, Object: "command/" + strings.Join(cmd.NodeClaims, ",")})
			keep = append(keep, cmd)
		default:
			for _, name := range cmd.NodeClaims {
				terminate(s, name, reason)
			}
			changed = true
		}
	}
	s.Karpenter.Disrupting = keep
	return changed
}

// terminate deletes a candidate's NodeClaim with the DisruptionTerminating
// events.
func terminate(s *cluster.State, claim string, reason karpv1.DisruptionReason) {
	nc := s.NodeClaims[claim]
	if nc == nil || nc.DeletionTimestamp != nil {
		return
	}
	var evs []events.Event
	if n := s.Nodes[nc.Status.NodeName]; n != nil && nc.Status.NodeName != "" {
		evs = append(evs, events.Event{Regarding: cluster.Regarding("Node", "v1", n), Type: corev1.EventTypeNormal, Reason: "DisruptionTerminating",
			Message: "Disrupting Node: " + title(reason), DedupeValues: []string{string(n.UID), string(reason)}})
	}
	evs = append(evs, events.Event{Regarding: claimRef(nc), Type: corev1.EventTypeNormal, Reason: "DisruptionTerminating",
		Message: "Disrupting NodeClaim: " + title(reason), DedupeValues: []string{string(nc.UID), string(reason)}})
	events.Publish(s, evs...)
	s.MarkDeleting(nc)
}

// abandon undoes a failed command: the disrupted taint and the
// DisruptionReason condition come off its candidates.
func abandon(s *cluster.State, cmd cluster.KarpenterCommand) {
	for _, name := range cmd.NodeClaims {
		nc := s.NodeClaims[name]
		if nc == nil || nc.DeletionTimestamp != nil {
			continue
		}
		if lifecycle.ClearCondition(nc, lifecycle.ConditionDisruptionReason) {
			nc.ResourceVersion = s.Bump()
		}
		if n := s.Nodes[nc.Status.NodeName]; n != nil && n.DeletionTimestamp == nil && hasTaint(n, lifecycle.DisruptedTaintKey) {
			old := n.DeepCopy()
			n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == lifecycle.DisruptedTaintKey })
			n.ResourceVersion = s.Bump()
			s.NodeUpdated(old, n)
		}
	}
}
