package replicaset

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// tally is what a sync reads from its set's pods, gathered in one walk
// over the group (docs/simulation-speed.md#replicaset-one-walk-per-set-session-23):
// whether a claim must release a pod, how many pods are active, and the
// status counts. At 100,000 pods a settled pass used to walk every group
// four times (the release check, the active count, the status's own
// gathering of active pods and its counts) and gathered the active pods
// into two new slices per set.
type tally struct {
	// release: a controlled pod not being deleted no longer matches the
	// selector (claimPods releases it).
	release bool
	// active counts the active pods in the set's namespace (activeOf).
	active int
	// The status counts over those active pods (calculateStatus), and the
	// earliest instant at which a ready pod not yet available becomes so.
	fullyLabeled, ready, available int32
	nextAvailable                  time.Time
}

// tallyGroup walks group (every pod rs controls, any order) once.
func tallyGroup(rs *appsv1.ReplicaSet, group []*corev1.Pod, selector func(map[string]string) bool, now time.Time) tally {
	var t tally
	for _, p := range group {
		t.add(rs, p, selector, now)
	}
	return t
}

// add counts one pod rs controls.
func (t *tally) add(rs *appsv1.ReplicaSet, p *corev1.Pod, selector func(map[string]string) bool, now time.Time) {
	if p.DeletionTimestamp != nil {
		return // neither released nor active
	}
	if !t.release && !selector(p.Labels) {
		t.release = true
	}
	t.addStatus(rs, p, func() bool { return controllerutil.HasLabels(p.Labels, rs.Spec.Template.Labels) }, now)
}

// addNoted is add with the label matches read from the pod's note
// (index.go) instead of the labels.
func (t *tally) addNoted(rs *appsv1.ReplicaSet, p *corev1.Pod, n *podNote, now time.Time) {
	if p.DeletionTimestamp != nil {
		return
	}
	if !n.matches {
		t.release = true
	}
	full := n.full
	t.addStatus(rs, p, func() bool { return full }, now)
}

// addStatus counts an active pod of rs's namespace that is not being
// deleted; fullyLabeled is asked only for such a pod.
func (t *tally) addStatus(rs *appsv1.ReplicaSet, p *corev1.Pod, fullyLabeled func() bool, now time.Time) {
	if p.Namespace != rs.Namespace || !controllerutil.IsPodActive(p) {
		return
	}
	t.active++
	if fullyLabeled() {
		t.fullyLabeled++
	}
	// One lookup of the Ready condition serves IsPodReady, IsPodAvailable
	// and AvailableAt, which each look it up.
	c := controllerutil.GetPodCondition(&p.Status, corev1.PodReady)
	if c == nil || c.Status != corev1.ConditionTrue {
		return
	}
	t.ready++
	minReady := rs.Spec.MinReadySeconds
	if availableAt(c, minReady, now) {
		t.available++
	} else if at := c.LastTransitionTime.Add(time.Duration(minReady) * time.Second); t.nextAvailable.IsZero() || at.Before(t.nextAvailable) {
		t.nextAvailable = at
	}
}

// availableAt is IsPodAvailable for a pod whose Ready condition c is True.
func availableAt(c *corev1.PodCondition, minReadySeconds int32, now time.Time) bool {
	if minReadySeconds == 0 {
		return true
	}
	d := time.Duration(minReadySeconds) * time.Second
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(d).Before(now)
}
