// Package replicaset is the ReplicaSet controller (pkg/controller/replicaset):
// it keeps spec.replicas active pods for each ReplicaSet, creating them from
// the template through the API server's admission and deleting the extra
// ones in upstream's scale-down order, and reports status.
package replicaset

import (
	"maps"
	"slices"
	"time"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
type Controller struct {
	quiet controllerutil.Quiet
	// kept is the last pass's pod index, valid while the object set is
	// keptSet (index.go).
	kept    *podIndex
	keptSet cluster.ObjectSet
}

// New returns the ReplicaSet controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync reconciles every ReplicaSet, in key order.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	if c.quiet.Skip(s) {
		return false, nil
	}
	ix := c.index(s)
	changed, err := controllerutil.SyncEach(s, s.ReplicaSets, "ReplicaSet", func(rs *appsv1.ReplicaSet) (bool, error) {
		return syncReplicaSet(s, ix, rs)
	})
	if err == nil {
		c.keep(s, ix)
	}
	c.quiet.DoneAnyTime(s, changed || err != nil, !ix.clockBound)
	return changed, err
}

func syncReplicaSet(s *cluster.State, ix *podIndex, rs *appsv1.ReplicaSet) (bool, error) {
	selector, err := controllerutil.SelectorMatcher(rs.Spec.Selector)
	if err != nil {
		return false, err
	}
	t := ix.tally(rs, selector)
	changed := claimPods(s, ix, rs, selector, t.release)
	if changed {
		t = ix.tally(rs, selector)
	}
	var manageErr error
	want := int(ptrValue(rs.Spec.Replicas, 1))
	diff := t.active - want
	switch {
	case diff < 0 && rejectedNow(s, ix, rs):
		// A pod of this set was rejected by its kubelet in this very instant
		// (a template pinned to a node that cannot run it). Upstream would
		// replace it at once, again and again; berth replaces it once per
		// RejectionBackoff, and only under `advance`, so a sync terminates.
		controllerutil.AddTimerOnce(s, cluster.Timer{At: s.Now.Add(RejectionBackoff), Owner: Name, Object: cluster.Key(rs.Namespace, rs.Name)})
	case diff < 0:
		created, err := createPods(s, rs, min(-diff, BurstReplicas))
		if len(created) > 0 {
			changed = true
			ix.touch(rs, created)
			t = ix.tally(rs, selector)
		}
		manageErr = err
	case diff > 0:
		pods := ix.active(rs)
		related := relatedPods(s, ix, rs)
		for _, p := range controllerutil.PodsToDelete(pods, related, min(diff, BurstReplicas), s.Now) {
			s.GracefulDeletePod(p, nil)
			s.Record(source, regarding(rs), corev1.EventTypeNormal, SuccessfulDeleteReason, "Deleted pod: "+p.Name)
			changed = true
		}
		ix.touch(rs, nil)
		t = ix.tally(rs, selector)
	}
	if diff != 0 || !t.nextAvailable.IsZero() {
		// The clock mattered: creations, deletions and the rejection
		// back-off happen at s.Now, and a ready pod not yet available
		// becomes so as the clock moves. Otherwise the sync counted pods
		// whose availability cannot change as time passes (ready pods
		// stay available, the others are not counted), and wrote the
		// same status at any instant (docs/simulation-speed.md#passes-the-clock-does-not-change-session-23).
		ix.clockBound = true
	}
	if updateStatus(s, rs, t, manageErr) {
		changed = true
	}
	return changed, nil
}

// RejectionBackoff spaces out replacements of pods the kubelet rejected.
const RejectionBackoff = time.Second

// rejectedNow reports whether a pod of rs failed admission at the current instant.
func rejectedNow(s *cluster.State, ix *podIndex, rs *appsv1.ReplicaSet) bool {
	for _, p := range ix.group(rs) {
		if p.Status.Phase == corev1.PodFailed && p.CreationTimestamp.Time.Equal(s.Now) {
			return true
		}
	}
	return false
}

// active returns the active pods rs controls, in key order.
func (ix *podIndex) active(rs *appsv1.ReplicaSet) []*corev1.Pod {
	return activeOf(rs, ix.owned(rs))
}

func activeOf(rs *appsv1.ReplicaSet, owned []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range owned {
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
// pods that no longer match, as the ControllerRefManager does. mayRelease
// is the tally's release flag: whether any pod of the set's group is to be
// released (the group does not change while orphans are adopted).
func claimPods(s *cluster.State, ix *podIndex, rs *appsv1.ReplicaSet, selector func(map[string]string) bool, mayRelease bool) bool {
	changed := false
	ix.ensure()
	adopt := func(p *corev1.Pod) bool {
		return p.DeletionTimestamp == nil && controllerutil.IsPodActive(p) && selector(p.Labels)
	}
	release := func(p *corev1.Pod) bool {
		return p.DeletionTimestamp == nil && !selector(p.Labels)
	}
	// The writes go in key order (their resourceVersions follow it); a
	// group without any is not put in order at all.
	if orphans := ix.orphansIn(rs.Namespace); slices.ContainsFunc(orphans, adopt) {
		for _, p := range ix.inKeyOrder("n/"+rs.Namespace, orphans) {
			if adopt(p) {
				p.OwnerReferences = append(p.OwnerReferences, controllerutil.NewControllerRef(rs, "apps/v1", "ReplicaSet"))
				p.ResourceVersion = s.Bump()
				changed = true
			}
		}
	}
	if mayRelease {
		for _, p := range ix.owned(rs) {
			if release(p) {
				controllerutil.ReleasePod(p, rs.UID)
				p.ResourceVersion = s.Bump()
				changed = true
			}
		}
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
// The template's spec is deep-copied straight into the pod, and of its
// metadata only what the pod takes: at 500 pods a sync, a whole copy of the
// template was a kilobyte of garbage per pod.
func PodFromTemplate(rs *appsv1.ReplicaSet) *corev1.Pod { return newPodMaker(rs).pod() }

// podMaker builds a sync's pods from one set's template. What every pod
// of the sync has alike and nothing edits in place is made once: the
// generateName, and the owner reference's flags (a release removes the
// reference from the pod's own slice, it never writes through them). The
// containers' request and limit maps are the template's own: nothing in
// berth writes into a pod's resource lists after it is created, and the
// API server's defaulting copies a list before it adds requests to it
// (admission.DefaultPod) (docs/simulation-speed.md#pod-creation-session-24).
type podMaker struct {
	rs           *appsv1.ReplicaSet
	generateName string
	ref          metav1.OwnerReference
}

func newPodMaker(rs *appsv1.ReplicaSet) *podMaker {
	return &podMaker{rs: rs, generateName: rs.Name + "-", ref: controllerutil.NewControllerRef(rs, "apps/v1", "ReplicaSet")}
}

func (m *podMaker) pod() *corev1.Pod {
	t := &m.rs.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       m.rs.Namespace,
			GenerateName:    m.generateName,
			Labels:          maps.Clone(t.Labels),
			Annotations:     maps.Clone(t.Annotations),
			Finalizers:      slices.Clone(t.Finalizers),
			OwnerReferences: []metav1.OwnerReference{m.ref},
		},
	}
	spec := t.Spec
	spec.Containers, spec.InitContainers = nil, nil
	spec.DeepCopyInto(&pod.Spec)
	pod.Spec.Containers = containersSharingResources(t.Spec.Containers)
	pod.Spec.InitContainers = containersSharingResources(t.Spec.InitContainers)
	return pod
}

// containersSharingResources deep-copies containers except their request
// and limit maps, which the copies share with the originals.
func containersSharingResources(in []corev1.Container) []corev1.Container {
	if in == nil {
		return nil
	}
	out := make([]corev1.Container, len(in))
	for i := range in {
		c := in[i]
		c.Resources.Requests, c.Resources.Limits = nil, nil
		c.DeepCopyInto(&out[i])
		out[i].Resources.Requests, out[i].Resources.Limits = in[i].Resources.Requests, in[i].Resources.Limits
	}
	return out
}

// createPods creates up to n pods and returns those it created.
func createPods(s *cluster.State, rs *appsv1.ReplicaSet, n int) ([]*corev1.Pod, error) {
	created := make([]*corev1.Pod, 0, n)
	maker := newPodMaker(rs)
	// One reference to the set serves every event of the sync (Record
	// takes it by value).
	about := regarding(rs)
	for i := 0; i < n; i++ {
		pod := maker.pod()
		if err := admission.CreatePod(s, pod); err != nil {
			// Record a failure once per distinct message; the controller keeps
			// retrying on later syncs (upstream retries with backoff).
			if c := replicaFailure(rs); c == nil || c.Message != err.Error() {
				s.Record(source, about, corev1.EventTypeWarning, FailedCreateReason, "Error creating: "+err.Error())
			}
			return created, err
		}
		created = append(created, pod)
		s.Record(source, about, corev1.EventTypeNormal, SuccessfulCreateReason, "Created pod: "+pod.Name)
	}
	return created, nil
}

func replicaFailure(rs *appsv1.ReplicaSet) *appsv1.ReplicaSetCondition {
	for i := range rs.Status.Conditions {
		if rs.Status.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure {
			return &rs.Status.Conditions[i]
		}
	}
	return nil
}

// updateStatus recomputes status (calculateStatus) from the tally of the
// set's active pods and writes it if it changed.
func updateStatus(s *cluster.State, rs *appsv1.ReplicaSet, t tally, manageErr error) bool {
	st := rs.Status.DeepCopy()
	st.Replicas = int32(t.active)
	st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = t.fullyLabeled, t.ready, t.available
	nextAvailable := t.nextAvailable
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
