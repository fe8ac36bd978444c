// Package replicaset is the ReplicaSet controller (pkg/controller/replicaset):
// it keeps spec.replicas active pods for each ReplicaSet, creating them from
// the template through the API server's admission and deleting the extra
// ones in upstream's scale-down order, and reports status.
package replicaset

import (
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// Name is the controller's name and its events' source component.
const Name = "replicaset-controller"

// BurstReplicas caps the pods created or deleted in one sync, as upstream.
const BurstReplicas = 500

// Event reasons (pkg/controller/replicaset/replica_set.go).
const (
	SuccessfulCreateReason = "SuccessfulCreate"
	SuccessfulDeleteReason = "SuccessfulDelete"
	FailedCreateReason     = "FailedCreate"
)

var source = cluster.EventSource{Component: Name}

// Controller implements sim.Controller.
type Controller struct{}

// New returns the ReplicaSet controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync reconciles every ReplicaSet, in key order.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	ix := &podIndex{s: s, dirty: true}
	return controllerutil.SyncEach(s, s.ReplicaSets, "ReplicaSet", func(rs *appsv1.ReplicaSet) (bool, error) {
		return syncReplicaSet(s, ix, rs)
	})
}

func syncReplicaSet(s *cluster.State, ix *podIndex, rs *appsv1.ReplicaSet) (bool, error) {
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return false, err
	}
	changed := claimPods(s, ix, rs, selector)
	pods := ix.active(rs)
	var manageErr error
	want := int(ptrValue(rs.Spec.Replicas, 1))
	diff := len(pods) - want
	switch {
	case diff < 0 && rejectedNow(s, ix, rs):
		// A pod of this set was rejected by its kubelet in this very instant
		// (a template pinned to a node that cannot run it). Upstream would
		// replace it at once, again and again; berth replaces it once per
		// RejectionBackoff, and only under `advance`, so a sync terminates.
		controllerutil.AddTimerOnce(s, cluster.Timer{At: s.Now.Add(RejectionBackoff), Owner: Name, Object: cluster.Key(rs.Namespace, rs.Name)})
	case diff < 0:
		created, err := createPods(s, rs, min(-diff, BurstReplicas))
		changed = changed || created > 0
		ix.dirty = ix.dirty || created > 0
		manageErr = err
	case diff > 0:
		related := relatedPods(s, ix, rs)
		for _, p := range controllerutil.PodsToDelete(pods, related, min(diff, BurstReplicas), s.Now) {
			s.GracefulDeletePod(p, nil)
			ix.dirty = true
			s.Record(source, regarding(rs), corev1.EventTypeNormal, SuccessfulDeleteReason, "Deleted pod: "+p.Name)
			changed = true
		}
	}
	if updateStatus(s, rs, ix.active(rs), manageErr) {
		changed = true
	}
	return changed, nil
}

// RejectionBackoff spaces out replacements of pods the kubelet rejected.
const RejectionBackoff = time.Second

// rejectedNow reports whether a pod of rs failed admission at the current instant.
func rejectedNow(s *cluster.State, ix *podIndex, rs *appsv1.ReplicaSet) bool {
	for _, p := range ix.owned(rs) {
		if p.Status.Phase == corev1.PodFailed && p.CreationTimestamp.Time.Equal(s.Now) {
			return true
		}
	}
	return false
}

// podIndex groups pods by controller UID (and orphans by namespace) in one
// pass over the state, so a sync is linear in the number of pods. It is
// rebuilt when this controller adds, removes or re-parents pods.
type podIndex struct {
	s       *cluster.State
	dirty   bool
	byOwner map[types.UID][]*corev1.Pod
	orphans map[string][]*corev1.Pod
}

func (ix *podIndex) ensure() {
	if !ix.dirty {
		return
	}
	ix.byOwner = map[types.UID][]*corev1.Pod{}
	ix.orphans = map[string][]*corev1.Pod{}
	for _, k := range cluster.SortedKeys(ix.s.Pods) {
		p := ix.s.Pods[k]
		if ref := metav1.GetControllerOf(p); ref != nil {
			ix.byOwner[ref.UID] = append(ix.byOwner[ref.UID], p)
		} else {
			ix.orphans[p.Namespace] = append(ix.orphans[p.Namespace], p)
		}
	}
	ix.dirty = false
}

// owned returns every pod rs controls, whatever its phase, in key order.
func (ix *podIndex) owned(rs *appsv1.ReplicaSet) []*corev1.Pod {
	ix.ensure()
	return ix.byOwner[rs.UID]
}

// active returns the active pods rs controls, in key order.
func (ix *podIndex) active(rs *appsv1.ReplicaSet) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range ix.owned(rs) {
		if p.Namespace == rs.Namespace && controllerutil.IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

// ActivePods returns the active pods the ReplicaSet controls, in key order.
func ActivePods(s *cluster.State, rs *appsv1.ReplicaSet) []*corev1.Pod {
	var out []*corev1.Pod
	for _, k := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[k]
		if p.Namespace == rs.Namespace && controllerutil.IsControlledBy(p, string(rs.UID)) && controllerutil.IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

// claimPods adopts orphan pods matching the selector and releases controlled
// pods that no longer match, as the ControllerRefManager does.
func claimPods(s *cluster.State, ix *podIndex, rs *appsv1.ReplicaSet, selector labels.Selector) bool {
	changed := false
	ix.ensure()
	for _, p := range ix.orphans[rs.Namespace] {
		if p.DeletionTimestamp == nil && controllerutil.IsPodActive(p) && selector.Matches(labels.Set(p.Labels)) {
			p.OwnerReferences = append(p.OwnerReferences, controllerutil.NewControllerRef(rs, "apps/v1", "ReplicaSet"))
			p.ResourceVersion = s.Bump()
			changed = true
		}
	}
	for _, p := range ix.byOwner[rs.UID] {
		if p.DeletionTimestamp != nil || selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		controllerutil.ReleasePod(p, rs.UID)
		p.ResourceVersion = s.Bump()
		changed = true
	}
	if changed {
		ix.dirty = true
	}
	return changed
}

// relatedPods are the pods of every ReplicaSet with the same controller as
// rs (the other revisions of a Deployment), used to spot doubled-up nodes.
func relatedPods(s *cluster.State, ix *podIndex, rs *appsv1.ReplicaSet) []*corev1.Pod {
	owner := metav1.GetControllerOf(rs)
	if owner == nil {
		return ix.active(rs)
	}
	var out []*corev1.Pod
	for _, k := range cluster.SortedKeys(s.ReplicaSets) {
		other := s.ReplicaSets[k]
		if other.Namespace == rs.Namespace && controllerutil.IsControlledBy(other, string(owner.UID)) {
			out = append(out, ix.active(other)...)
		}
	}
	return out
}

// PodFromTemplate builds a pod for the ReplicaSet (GetPodFromTemplate).
func PodFromTemplate(rs *appsv1.ReplicaSet) *corev1.Pod {
	t := rs.Spec.Template.DeepCopy()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       rs.Namespace,
			GenerateName:    rs.Name + "-",
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{controllerutil.NewControllerRef(rs, "apps/v1", "ReplicaSet")},
		},
		Spec: t.Spec,
	}
	return pod
}

func createPods(s *cluster.State, rs *appsv1.ReplicaSet, n int) (int, error) {
	for i := 0; i < n; i++ {
		pod := PodFromTemplate(rs)
		if err := admission.CreatePod(s, pod); err != nil {
			// Record a failure once per distinct message; the controller keeps
			// retrying on later syncs (upstream retries with backoff).
			if c := replicaFailure(rs); c == nil || c.Message != err.Error() {
				s.Record(source, regarding(rs), corev1.EventTypeWarning, FailedCreateReason, "Error creating: "+err.Error())
			}
			return i, err
		}
		s.Record(source, regarding(rs), corev1.EventTypeNormal, SuccessfulCreateReason, "Created pod: "+pod.Name)
	}
	return n, nil
}

func replicaFailure(rs *appsv1.ReplicaSet) *appsv1.ReplicaSetCondition {
	for i := range rs.Status.Conditions {
		if rs.Status.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure {
			return &rs.Status.Conditions[i]
		}
	}
	return nil
}

// updateStatus recomputes status (calculateStatus) and writes it if it changed.
func updateStatus(s *cluster.State, rs *appsv1.ReplicaSet, pods []*corev1.Pod, manageErr error) bool {
	templateLabels := labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	st := rs.Status.DeepCopy()
	st.Replicas = int32(len(pods))
	st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = 0, 0, 0
	var nextAvailable time.Time
	for _, p := range pods {
		if templateLabels.Matches(labels.Set(p.Labels)) {
			st.FullyLabeledReplicas++
		}
		if controllerutil.IsPodReady(p) {
			st.ReadyReplicas++
			if controllerutil.IsPodAvailable(p, rs.Spec.MinReadySeconds, s.Now) {
				st.AvailableReplicas++
			} else if at := controllerutil.AvailableAt(p, rs.Spec.MinReadySeconds); nextAvailable.IsZero() || at.Before(nextAvailable) {
				nextAvailable = at
			}
		}
	}
	st.ObservedGeneration = rs.Generation
	switch {
	case manageErr != nil:
		if c := replicaFailure(rs); c == nil || c.Message != manageErr.Error() {
			st.Conditions = removeFailure(st.Conditions)
			st.Conditions = append(st.Conditions, appsv1.ReplicaSetCondition{
				Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(s.Now), Reason: FailedCreateReason, Message: manageErr.Error(),
			})
		}
	default:
		st.Conditions = removeFailure(st.Conditions)
	}
	if !nextAvailable.IsZero() {
		// Available is "ready for longer than minReadySeconds": look just after.
		controllerutil.AddTimerOnce(s, cluster.Timer{At: nextAvailable.Add(time.Second), Owner: Name, Object: cluster.Key(rs.Namespace, rs.Name), Settling: true})
	}
	if apiequality.Semantic.DeepEqual(*st, rs.Status) {
		return false
	}
	rs.Status = *st
	rs.ResourceVersion = s.Bump()
	return true
}

func removeFailure(cs []appsv1.ReplicaSetCondition) []appsv1.ReplicaSetCondition {
	var out []appsv1.ReplicaSetCondition
	for _, c := range cs {
		if c.Type != appsv1.ReplicaSetReplicaFailure {
			out = append(out, c)
		}
	}
	return out
}

func regarding(rs *appsv1.ReplicaSet) corev1.ObjectReference {
	return cluster.Regarding("ReplicaSet", "apps/v1", rs)
}

func ptrValue(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}
