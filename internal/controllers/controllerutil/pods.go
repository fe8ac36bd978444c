// Package controllerutil holds what several workload controllers share, after
// pkg/controller/controller_utils.go and pkg/api/v1/pod: pod readiness and
// availability, owner references and the scale-down ranking.
package controllerutil

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// PodDeletionCostAnnotation ranks pods for scale-down (lower goes first).
const PodDeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// GetPodCondition returns the pod's condition of type t, or nil.
func GetPodCondition(status *corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}

// IsPodReady reports whether the pod's Ready condition is True.
func IsPodReady(pod *corev1.Pod) bool {
	c := GetPodCondition(&pod.Status, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsPodAvailable reports whether the pod has been ready for at least
// minReadySeconds at now (strictly longer, as upstream compares with Before).
func IsPodAvailable(pod *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	c := GetPodCondition(&pod.Status, corev1.PodReady)
	if c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	d := time.Duration(minReadySeconds) * time.Second
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(d).Before(now)
}

// AvailableAt is when a ready pod becomes available under minReadySeconds
// (the first instant at which IsPodAvailable is true is just after it); zero
// when the pod is not ready.
func AvailableAt(pod *corev1.Pod, minReadySeconds int32) time.Time {
	c := GetPodCondition(&pod.Status, corev1.PodReady)
	if c == nil || c.Status != corev1.ConditionTrue {
		return time.Time{}
	}
	return c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second)
}

// IsPodActive is true for pods that are neither finished nor being deleted.
func IsPodActive(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed && pod.DeletionTimestamp == nil
}

// IsControlledBy reports whether obj's controller reference points at uid.
func IsControlledBy(obj metav1.Object, uid string) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && string(ref.UID) == uid
}

// NewControllerRef builds the controller owner reference for owner.
func NewControllerRef(owner metav1.Object, apiVersion, kind string) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{
		APIVersion:         apiVersion,
		Kind:               kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         &t,
		BlockOwnerDeletion: &t,
	}
}

// RankedPods orders pods for scale-down as ActivePodsWithRanks does: the
// first ones are deleted first.
type RankedPods struct {
	Pods []*corev1.Pod
	// Rank is, per pod, how many related pods share its node (doubled-up
	// pods go first).
	Rank []int
	Now  time.Time
}

func (s RankedPods) Len() int { return len(s.Pods) }

func (s RankedPods) Swap(i, j int) {
	s.Pods[i], s.Pods[j] = s.Pods[j], s.Pods[i]
	s.Rank[i], s.Rank[j] = s.Rank[j], s.Rank[i]
}

var phaseOrder = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

func (s RankedPods) Less(i, j int) bool {
	a, b := s.Pods[i], s.Pods[j]
	// 1. Unassigned < assigned.
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	// 2. Pending < Unknown < Running.
	if phaseOrder[a.Status.Phase] != phaseOrder[b.Status.Phase] {
		return phaseOrder[a.Status.Phase] < phaseOrder[b.Status.Phase]
	}
	// 3. Not ready < ready.
	if IsPodReady(a) != IsPodReady(b) {
		return !IsPodReady(a)
	}
	// 4. Lower deletion cost < higher.
	if ca, cb := deletionCost(a), deletionCost(b); ca != cb {
		return ca < cb
	}
	// 5. Doubled up < not doubled up.
	if s.Rank[i] != s.Rank[j] {
		return s.Rank[i] > s.Rank[j]
	}
	// 6. Ready for less time < more time, on a logarithmic scale
	// (LogarithmicScaleDown); ties in a bucket broken by UID.
	if IsPodReady(a) && IsPodReady(b) {
		ta, tb := readyTime(a), readyTime(b)
		if !ta.Equal(tb) {
			return s.newer(ta, tb, a, b)
		}
	}
	// 7. More restarts < fewer.
	if ra, rb := maxRestarts(a), maxRestarts(b); ra != rb {
		return ra > rb
	}
	// 8. Newer < older.
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return s.newer(a.CreationTimestamp.Time, b.CreationTimestamp.Time, a, b)
	}
	return false
}

func (s RankedPods) newer(t1, t2 time.Time, a, b *corev1.Pod) bool {
	if s.Now.IsZero() || t1.IsZero() || t2.IsZero() {
		return afterOrZero(t1, t2)
	}
	diff := logRank(s.Now.Sub(t1)) - logRank(s.Now.Sub(t2))
	if diff == 0 {
		return a.UID < b.UID
	}
	return diff < 0
}

func logRank(d time.Duration) int64 {
	if d <= 0 {
		return -1
	}
	return int64(math.Log2(float64(d)))
}

// afterOrZero: a zero time sorts first, then the later one.
func afterOrZero(t1, t2 time.Time) bool {
	if t1.IsZero() || t2.IsZero() {
		return t1.IsZero()
	}
	return t1.After(t2)
}

func readyTime(pod *corev1.Pod) time.Time {
	if c := GetPodCondition(&pod.Status, corev1.PodReady); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

func maxRestarts(pod *corev1.Pod) int32 {
	var m int32
	for _, cs := range pod.Status.ContainerStatuses {
		m = max(m, cs.RestartCount)
	}
	return m
}

func deletionCost(pod *corev1.Pod) int64 {
	v, ok := pod.Annotations[PodDeletionCostAnnotation]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return n
}

// PodsToDelete picks diff pods of pods to delete, ranking doubled-up pods by
// how many related pods (same owner family) share their node, as the
// ReplicaSet controller's getPodsToDelete does. pods must be in a
// deterministic order; ties keep it.
func PodsToDelete(pods, related []*corev1.Pod, diff int, now time.Time) []*corev1.Pod {
	if diff >= len(pods) {
		return pods
	}
	onNode := map[string]int{}
	for _, p := range related {
		if p.Spec.NodeName != "" && IsPodActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	ranked := RankedPods{Pods: append([]*corev1.Pod(nil), pods...), Rank: make([]int, len(pods)), Now: now}
	for i, p := range ranked.Pods {
		ranked.Rank[i] = onNode[p.Spec.NodeName]
	}
	sort.Stable(ranked)
	return ranked.Pods[:diff]
}

// ClaimPods adopts the orphan pods in the owner's namespace that the selector
// matches and canAdopt accepts, and releases the owner's pods the selector no
// longer matches (ControllerRefManager.ClaimPods); it reports any change.
func ClaimPods(s *cluster.State, owner metav1.Object, apiVersion, kind string, selector labels.Selector, canAdopt func(*corev1.Pod) bool) bool {
	// Whether a pod is adopted or released depends on that pod alone, so
	// the pods are examined in any order and only the ones to change are
	// sorted: every round pays one pass, not a sort of every pod.
	var adopt, release []string
	for k, p := range s.Pods {
		if p.Namespace != owner.GetNamespace() || p.DeletionTimestamp != nil {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(p)
		if ref != nil && ref.UID != owner.GetUID() {
			continue
		}
		matches := selector.Matches(labels.Set(p.Labels))
		switch {
		case ref == nil && matches && canAdopt(p) && IsPodActive(p):
			adopt = append(adopt, k)
		case ref != nil && !matches:
			release = append(release, k)
		}
	}
	if len(adopt) == 0 && len(release) == 0 {
		return false
	}
	// The adopting marks are taken before the merged list is sorted: that
	// list may share adopt's backing array, and sorting it in place would
	// reorder adopt too.
	adopting := map[string]bool{}
	for _, k := range adopt {
		adopting[k] = true
	}
	keys := append(adopt, release...)
	slices.Sort(keys)
	for _, k := range keys {
		p := s.Pods[k]
		if adopting[k] {
			p.OwnerReferences = append(p.OwnerReferences, NewControllerRef(owner, apiVersion, kind))
		} else {
			ReleasePod(p, owner.GetUID())
		}
		p.ResourceVersion = s.Bump()
	}
	return true
}

// ReleasePod drops the pod's owner references to uid.
func ReleasePod(p *corev1.Pod, uid types.UID) {
	kept := p.OwnerReferences[:0]
	for _, r := range p.OwnerReferences {
		if r.UID != uid {
			kept = append(kept, r)
		}
	}
	p.OwnerReferences = kept
}
