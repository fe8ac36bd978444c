// Package tainteviction is the taint-eviction controller
// (pkg/controller/tainteviction): pods bound to a node with NoExecute taints
// they do not tolerate are deleted at once; pods that tolerate them for
// tolerationSeconds are deleted when the shortest of those runs out.
package tainteviction

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// Name is the controller's name and its events' source component.
const Name = "taint-eviction-controller"

// Event and condition texts (taint_eviction.go).
const (
	EvictionReason          = "TaintManagerEviction"
	DisruptionTargetReason  = "DeletionByTaintManager"
	DisruptionTargetMessage = "Taint manager: deleting due to NoExecute taint"
)

var source = cluster.EventSource{Component: Name}

// Controller implements sim.Controller.
//
// Scheduled evictions live in the state as (non-settling) timers owned by
// this controller, one per pod; the eviction time itself is recomputed from
// the state: the later of the pod's binding and the earliest NoExecute
// taint's timeAdded, plus the shortest tolerationSeconds. A timer still
// queued when the taints go away is a scheduled eviction to cancel.
type Controller struct{}

// New returns the taint-eviction controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync examines every bound pod against its node's NoExecute taints. A pod
// on a node without NoExecute taints and with no eviction scheduled has
// nothing to cancel or evict, so only the others are visited (in key order).
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	scheduled := map[string]bool{}
	for _, t := range s.Timers {
		if t.Owner == Name && t.At.After(s.Now) {
			scheduled[t.Object] = true
		}
	}
	tainted := map[string]bool{}
	for name, node := range s.Nodes {
		if len(noExecuteTaints(node)) > 0 {
			tainted[name] = true
		}
	}
	if len(tainted) == 0 && len(scheduled) == 0 {
		// No pod can pass the filter below: skip the walk over every pod
		// (docs/simulation-speed.md#taint-eviction-podgc-endpointslice-session-23).
		return false, nil
	}
	var keys []string
	for key, pod := range s.Pods {
		if pod.Spec.NodeName != "" && (tainted[pod.Spec.NodeName] || scheduled[key]) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	changed := false
	for _, key := range keys {
		pod := s.Pods[key]
		if pod == nil || cluster.IsTerminal(pod) || pod.DeletionTimestamp != nil {
			continue
		}
		node, ok := s.Nodes[pod.Spec.NodeName]
		if !ok {
			continue
		}
		if processPod(s, pod, node) {
			changed = true
		}
	}
	return changed, nil
}

func processPod(s *cluster.State, pod *corev1.Pod, node *corev1.Node) bool {
	key := cluster.Key(pod.Namespace, pod.Name)
	taints := noExecuteTaints(node)
	if len(taints) == 0 {
		return cancel(s, pod, key)
	}
	used, allTolerated := matchingTolerations(taints, pod.Spec.Tolerations)
	if !allTolerated {
		cancel(s, pod, key)
		evict(s, pod)
		return true
	}
	wait := minTolerationTime(used)
	if wait < 0 {
		return cancel(s, pod, key)
	}
	at := observedSince(pod, taints).Add(wait)
	if !at.After(s.Now) {
		dropTimer(s, key)
		evict(s, pod)
		return true
	}
	controllerutil.AddTimerOnce(s, cluster.Timer{At: at, Owner: Name, Object: key})
	return false
}

func noExecuteTaints(node *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// matchingTolerations returns, for each taint, the first toleration that
// tolerates it; false when some taint is not tolerated.
func matchingTolerations(taints []corev1.Taint, tolerations []corev1.Toleration) ([]corev1.Toleration, bool) {
	logger := klog.Background()
	var used []corev1.Toleration
	for i := range taints {
		found := false
		for j := range tolerations {
			if tolerations[j].ToleratesTaint(logger, &taints[i], false) {
				used = append(used, tolerations[j])
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return used, true
}

// minTolerationTime is the shortest tolerationSeconds (values <= 0 mean
// now); negative when every toleration is unbounded.
func minTolerationTime(tolerations []corev1.Toleration) time.Duration {
	if len(tolerations) == 0 {
		return 0
	}
	best := int64(math.MaxInt64)
	for _, t := range tolerations {
		if t.TolerationSeconds == nil {
			continue
		}
		if *t.TolerationSeconds <= 0 {
			return 0
		}
		best = min(best, *t.TolerationSeconds)
	}
	if best == math.MaxInt64 {
		return -1
	}
	return time.Duration(best) * time.Second
}

// observedSince is when the controller first saw the pod under these
// taints: the later of the pod's binding and the earliest taint timeAdded.
func observedSince(pod *corev1.Pod, taints []corev1.Taint) time.Time {
	bound := pod.CreationTimestamp.Time
	if c := controllerutil.GetPodCondition(&pod.Status, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionTrue {
		bound = c.LastTransitionTime.Time
	} else if pod.Status.StartTime != nil {
		bound = pod.Status.StartTime.Time
	}
	var tainted time.Time
	for _, t := range taints {
		if t.TimeAdded != nil && (tainted.IsZero() || t.TimeAdded.Before(&metav1.Time{Time: tainted})) {
			tainted = t.TimeAdded.Time
		}
	}
	if tainted.After(bound) {
		return tainted
	}
	return bound
}

// cancel drops a scheduled eviction and says so, as cancelWorkWithEvent does.
func cancel(s *cluster.State, pod *corev1.Pod, key string) bool {
	if !dropTimer(s, key) {
		return false
	}
	s.Record(source, regarding(pod), corev1.EventTypeNormal, EvictionReason, fmt.Sprintf("Cancelling deletion of Pod %s", key))
	return true
}

// dropTimer removes this controller's pending timer for key; it reports
// whether one was queued.
func dropTimer(s *cluster.State, key string) bool {
	found := false
	kept := s.Timers[:0]
	for _, t := range s.Timers {
		if t.Owner == Name && t.Object == key && t.At.After(s.Now) {
			found = true
			continue
		}
		kept = append(kept, t)
	}
	s.Timers = kept
	return found
}

// evict marks the pod as a disruption target and deletes it.
func evict(s *cluster.State, pod *corev1.Pod) {
	s.Record(source, regarding(pod), corev1.EventTypeNormal, EvictionReason,
		fmt.Sprintf("Marking for deletion Pod %s", cluster.Key(pod.Namespace, pod.Name)))
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(s.Now),
		Reason:             DisruptionTargetReason, Message: DisruptionTargetMessage,
	})
	s.GracefulDeletePod(pod, nil)
}

func regarding(pod *corev1.Pod) corev1.ObjectReference {
	return cluster.Regarding("Pod", "v1", pod)
}
