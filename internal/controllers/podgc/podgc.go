// Package podgc is the pod garbage collector (pkg/controller/podgc) for the
// two cases that release pods stuck on a lost node
// (docs/node-lifecycle.md#pods-on-lost-nodes):
//
//   - orphaned pods, bound to a node that no longer exists: the collector
//     quarantines the node name for 40 s (in case the node shows up late),
//     then marks the pods Failed with a DisruptionTarget condition and
//     force-deletes them;
//   - Terminating pods on a node that is not Ready and carries the
//     node.kubernetes.io/out-of-service taint: force-deleted at once.
//
// The real collector runs every 20 s; berth runs it on 20 s ticks of
// virtual time counted from the cluster's time zero, and wakes only when one
// of those cases has work, so an idle cluster sets no timer. Terminated pods
// above the 12,500-pod threshold are not collected (a threshold berth's
// clusters do not reach), and unbound Terminating pods never exist in berth:
// the API server removes them at once.
package podgc

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// Name is the controller's name.
const Name = "pod-garbage-collector"

// Timing of the real collector (gc_controller.go).
const (
	CheckPeriod    = 20 * time.Second
	QuarantineTime = 40 * time.Second
)

// The condition an orphaned pod gets before it is deleted.
const (
	OrphanedReason  = "DeletionByPodGC"
	OrphanedMessage = "PodGC: node no longer exists"
)

// Controller implements sim.Controller.
type Controller struct {
	quiet controllerutil.Quiet
	// idle: the last pass (on idleState) found no candidate, at this
	// object set and count of bindings and deletion marks.
	idleState *cluster.State
	idleSet   cluster.ObjectSet
	idleMarks int64
}

// New returns the pod garbage collector.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync collects the pods that are due and sets a timer for the next pass
// that has work.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	// A pass reads the state and the clock only, and its timer is queued
	// once: at the same resource version and instant as a pass that
	// changed nothing, it would change nothing either
	// (docs/simulation-speed.md#passes-that-cannot-change-anything). A
	// pass that found no candidate (no pod on a missing node, none
	// Terminating) read the clock for nothing: it stays skippable until
	// the next write, whatever the clock.
	if c.quiet.Skip(s) {
		return false, nil
	}
	// A pod becomes a candidate when it is created bound, bound, marked
	// for deletion, or its node goes (or is replaced): all move the
	// object set or the count of bindings and deletion marks. Status
	// writes, the bulk of the writes once pods are placed, do not; so
	// after a pass without candidates the walk is skipped until one of
	// those moves
	// (docs/simulation-speed.md#passes-over-a-set-of-objects-that-did-not-change-session-24).
	set, marks := s.ObjectSet(), s.BindsAndDeletes()
	if c.idleState == s && c.idleSet == set && c.idleMarks == marks {
		c.quiet.DoneAnyTime(s, false, true)
		return false, nil
	}
	c.idleState = nil
	changed, candidates := c.sync(s)
	if !changed && candidates == 0 {
		c.idleState, c.idleSet, c.idleMarks = s, set, marks
	}
	c.quiet.DoneAnyTime(s, changed, candidates == 0)
	return changed, nil
}

// sync is one pass; it reports whether it changed anything and how many
// pods it had to judge.
func (c *Controller) sync(s *cluster.State) (bool, int) {
	// Most passes find nothing: look at every pod cheaply, sort only the
	// few candidates (deletions happen in key order).
	var candidates []string
	for key, pod := range s.Pods {
		if pod.Spec.NodeName == "" {
			continue
		}
		if _, ok := s.Nodes[pod.Spec.NodeName]; ok && pod.DeletionTimestamp == nil {
			continue
		}
		candidates = append(candidates, key)
	}
	sort.Strings(candidates)
	changed := false
	var next time.Time
	for _, key := range candidates {
		pod := s.Pods[key]
		at, condition, ok := due(s, pod)
		if !ok {
			continue
		}
		if at.After(s.Now) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			continue
		}
		markFailedAndDelete(s, pod, condition)
		changed = true
	}
	if !next.IsZero() {
		controllerutil.AddTimerOnce(s, cluster.Timer{At: next, Owner: Name, Settling: true})
	}
	return changed, len(candidates)
}

// due says whether the collector will delete the pod and at which pass,
// with the condition it adds first (nil: none).
func due(s *cluster.State, pod *corev1.Pod) (time.Time, *corev1.PodCondition, bool) {
	node, ok := s.Nodes[pod.Spec.NodeName]
	if !ok {
		// gcOrphaned: seen at the first pass after the pod became an
		// orphan, deleted at the first pass after the quarantine.
		at := nextPass(s, nextPass(s, orphanedSince(s, pod)).Add(QuarantineTime))
		return at, &corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: OrphanedReason, Message: OrphanedMessage,
		}, true
	}
	if pod.DeletionTimestamp == nil || nodeReady(node) || !hasTaintKey(node, corev1.TaintNodeOutOfService) {
		return time.Time{}, nil, false
	}
	// gcTerminating: the first pass after the pod, the node and the taint
	// were all in that state.
	return nextPass(s, terminatingSince(pod, node)), nil, true
}

// orphanedSince is when the pod lost its node: the node's end in the cost
// ledger, or the pod's creation when it was bound to a node that never
// existed (or whose record is gone).
func orphanedSince(s *cluster.State, pod *corev1.Pod) time.Time {
	since := pod.CreationTimestamp.Time
	for i := len(s.NodeLedger) - 1; i >= 0; i-- {
		if l := s.NodeLedger[i]; l.Name == pod.Spec.NodeName {
			if l.End.After(since) {
				since = l.End
			}
			break
		}
	}
	return since
}

// terminatingSince is the latest of the deletion request, the node turning
// not Ready and the out-of-service taint's timeAdded (when stamped).
func terminatingSince(pod *corev1.Pod, node *corev1.Node) time.Time {
	since := pod.DeletionTimestamp.Time
	if g := pod.DeletionGracePeriodSeconds; g != nil {
		since = since.Add(-time.Duration(*g) * time.Second)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeOutOfService && t.TimeAdded != nil && t.TimeAdded.After(since) {
			since = t.TimeAdded.Time
		}
	}
	return since
}

// nextPass is the first collector pass at or after t.
func nextPass(s *cluster.State, t time.Time) time.Time {
	if !t.After(cluster.Epoch) {
		return cluster.Epoch
	}
	n := (t.Sub(cluster.Epoch) + CheckPeriod - 1) / CheckPeriod
	return cluster.Epoch.Add(n * CheckPeriod)
}

// markFailedAndDelete is markFailedAndDeletePodWithCondition: a pod that
// has not finished is patched to phase Failed (with the condition, if any)
// so that nobody mistakes it for a running one, then force-deleted.
func markFailedAndDelete(s *cluster.State, pod *corev1.Pod, condition *corev1.PodCondition) {
	if !cluster.IsTerminal(pod) {
		s.UpdatePodStatus(pod, func(st *corev1.PodStatus) bool {
			st.Phase = corev1.PodFailed
			if condition != nil {
				c := *condition
				c.LastTransitionTime = metav1.NewTime(s.Now)
				if old := controllerutil.GetPodCondition(st, c.Type); old != nil {
					if old.Status == c.Status {
						c.LastTransitionTime = old.LastTransitionTime
					}
					*old = c
				} else {
					st.Conditions = append(st.Conditions, c)
				}
			}
			return true
		})
	}
	s.ForceDeletePod(pod)
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaintKey(node *corev1.Node, key string) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
