// Package deployment is the Deployment controller (pkg/controller/deployment):
// it owns one ReplicaSet per pod template revision, named
// <deployment>-<pod-template-hash>, rolls pods from the old ones to the new
// one (RollingUpdate or Recreate), prunes old revisions and reports status
// and the Available/Progressing conditions.
package deployment

import (
	"fmt"
	"strconv"
	"time"

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
const Name = "deployment-controller"

var source = cluster.EventSource{Component: Name}

// Controller implements sim.Controller.
type Controller struct{}

// New returns the Deployment controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync reconciles every Deployment in key order. A deployment's sync is
// repeated by the sim loop until nothing changes, as the work queue would.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	return controllerutil.SyncEach(s, s.Deployments, "Deployment", func(d *appsv1.Deployment) (bool, error) {
		before := s.ResourceVersion
		err := syncDeployment(s, d)
		return s.ResourceVersion != before, err
	})
}

func syncDeployment(s *cluster.State, d *appsv1.Deployment) error {
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return err
	}
	if selector.Empty() {
		// Upstream refuses to act on a selector that selects everything.
		return nil
	}
	rsList := claimReplicaSets(s, d, selector)
	if d.Spec.Paused {
		return syncScale(s, d, rsList)
	}
	if isScalingEvent(s, d, rsList) {
		return syncScale(s, d, rsList)
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return rolloutRecreate(s, d, rsList)
	}
	return rolloutRolling(s, d, rsList)
}

// claimReplicaSets returns the ReplicaSets the deployment controls (adopting
// matching orphans), in creation order.
func claimReplicaSets(s *cluster.State, d *appsv1.Deployment, selector labels.Selector) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, k := range cluster.SortedKeys(s.ReplicaSets) {
		rs := s.ReplicaSets[k]
		if rs.Namespace != d.Namespace || rs.DeletionTimestamp != nil {
			continue
		}
		ref := metav1.GetControllerOf(rs)
		switch {
		case ref != nil && ref.UID == d.UID:
			out = append(out, rs)
		case ref == nil && selector.Matches(labels.Set(rs.Labels)):
			rs.OwnerReferences = append(rs.OwnerReferences, controllerutil.NewControllerRef(d, "apps/v1", "Deployment"))
			rs.ResourceVersion = s.Bump()
			out = append(out, rs)
		}
	}
	sortByCreation(out)
	return out
}

// findNewReplicaSet is the oldest ReplicaSet whose template equals the
// deployment's, ignoring the hash label.
func findNewReplicaSet(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	for _, rs := range rsList {
		if controllerutil.EqualIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

func oldReplicaSets(rsList []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rsList {
		if rs != newRS {
			out = append(out, rs)
		}
	}
	return out
}

// getAllReplicaSetsAndSyncRevision finds (or, if create, makes) the new
// ReplicaSet and brings its revision annotation and the deployment's up to date.
func getAllReplicaSetsAndSyncRevision(s *cluster.State, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	existing := findNewReplicaSet(d, rsList)
	olds := oldReplicaSets(rsList, existing)
	newRS, err := getNewReplicaSet(s, d, existing, olds, create)
	return newRS, olds, err
}

func getNewReplicaSet(s *cluster.State, d *appsv1.Deployment, existing *appsv1.ReplicaSet, olds []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, error) {
	newRevision := strconv.FormatInt(maxRevision(olds)+1, 10)
	if existing != nil {
		annotationsChanged := setNewReplicaSetAnnotations(d, existing, newRevision, true)
		if annotationsChanged || existing.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			if existing.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
				existing.Spec.MinReadySeconds = d.Spec.MinReadySeconds
				existing.Generation++
			}
			existing.ResourceVersion = s.Bump()
		}
		changed := setDeploymentRevision(d, existing.Annotations[RevisionAnnotation])
		if getCondition(&d.Status, appsv1.DeploymentProgressing) == nil {
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, FoundNewRSReason,
				fmt.Sprintf("Found new replica set %q", existing.Name), s.Now))
			changed = true
		}
		if changed {
			d.ResourceVersion = s.Bump()
		}
		return existing, nil
	}
	if !create {
		return nil, nil
	}
	for {
		hash := controllerutil.ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
		name := replicaSetName(d.Name, hash)
		if other, ok := s.ReplicaSets[cluster.Key(d.Namespace, name)]; ok {
			// A hash collision: reuse the ReplicaSet if it is ours and has our
			// template, otherwise bump the collision count and hash again.
			if controllerutil.IsControlledBy(other, string(d.UID)) && controllerutil.EqualIgnoreHash(&other.Spec.Template, &d.Spec.Template) {
				return other, nil
			}
			n := int32(0)
			if d.Status.CollisionCount != nil {
				n = *d.Status.CollisionCount
			}
			n++
			d.Status.CollisionCount = &n
			d.ResourceVersion = s.Bump()
			continue
		}
		return createReplicaSet(s, d, olds, hash, name, newRevision)
	}
}

// replicaSetName is generateReplicaSetName: the hash is kept whole and the
// deployment name shortened to fit 253 characters.
func replicaSetName(deployment, hash string) string {
	const maxNameLength = 253
	if len(deployment)+1+len(hash) > maxNameLength {
		deployment = deployment[:maxNameLength-1-len(hash)]
	}
	return deployment + "-" + hash
}

func createReplicaSet(s *cluster.State, d *appsv1.Deployment, olds []*appsv1.ReplicaSet, hash, name, newRevision string) (*appsv1.ReplicaSet, error) {
	template := d.Spec.Template.DeepCopy()
	template.Labels = withLabel(template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	selector := d.Spec.Selector.DeepCopy()
	selector.MatchLabels = withLabel(selector.MatchLabels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	zero := int32(0)
	rs := &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{Kind: "ReplicaSet", APIVersion: "apps/v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Labels:            template.Labels,
			Namespace:         d.Namespace,
			OwnerReferences:   []metav1.OwnerReference{controllerutil.NewControllerRef(d, "apps/v1", "Deployment")},
			UID:               types.UID(s.NewUID()),
			CreationTimestamp: metav1.NewTime(s.Now),
			Generation:        1,
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        &zero,
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        selector,
			Template:        *template,
		},
	}
	n := NewRSNewReplicas(d, append(append([]*appsv1.ReplicaSet(nil), olds...), rs), rs)
	rs.Spec.Replicas = &n
	setNewReplicaSetAnnotations(d, rs, newRevision, false)
	rs.ResourceVersion = s.Bump()
	s.NoteCreated(rs.UID)
	s.ReplicaSets[cluster.Key(rs.Namespace, rs.Name)] = rs
	if n > 0 {
		s.Record(source, regarding(d), corev1.EventTypeNormal, "ScalingReplicaSet",
			fmt.Sprintf("Scaled up replica set %s from 0 to %d", rs.Name, n))
	}
	setDeploymentRevision(d, newRevision)
	setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewReplicaSetReason,
		fmt.Sprintf("Created new replica set %q", rs.Name), s.Now))
	d.ResourceVersion = s.Bump()
	return rs, nil
}

func withLabel(m map[string]string, key, value string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	if key != "" {
		out[key] = value
	}
	return out
}

func setDeploymentRevision(d *appsv1.Deployment, rev string) bool {
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if d.Annotations[RevisionAnnotation] == rev {
		return false
	}
	d.Annotations[RevisionAnnotation] = rev
	return true
}

// scaleReplicaSet sets a ReplicaSet's replicas (and the replica annotations)
// and records ScalingReplicaSet when the size changes.
func scaleReplicaSet(s *cluster.State, d *appsv1.Deployment, rs *appsv1.ReplicaSet, newScale int32) bool {
	old := rsReplicas(rs)
	sizeChanged := old != newScale
	annotations := rs.DeepCopy()
	annotationsChanged := setReplicasAnnotations(annotations, replicas(d), replicas(d)+MaxSurge(d))
	if !sizeChanged && !annotationsChanged {
		return false
	}
	rs.Annotations = annotations.Annotations
	if sizeChanged {
		rs.Spec.Replicas = &newScale
		rs.Generation++
	}
	rs.ResourceVersion = s.Bump()
	if sizeChanged {
		op := "up"
		if newScale < old {
			op = "down"
		}
		s.Record(source, regarding(d), corev1.EventTypeNormal, "ScalingReplicaSet",
			fmt.Sprintf("Scaled %s replica set %s from %d to %d", op, rs.Name, old, newScale))
	}
	return sizeChanged
}

// isScalingEvent: an active ReplicaSet was sized for a different replica count.
func isScalingEvent(s *cluster.State, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) bool {
	for _, rs := range activeReplicaSets(rsList) {
		if desired, ok := desiredReplicasAnnotation(rs); ok && desired != replicas(d) {
			return true
		}
	}
	return false
}

// syncScale handles a paused deployment or a change of spec.replicas.
// Proportional scaling across several active ReplicaSets is not modelled:
// the single active (or newest) one takes the full count, a saturated new
// one scales the old ones to zero, otherwise the rollout continues.
func syncScale(s *cluster.State, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, olds, err := getAllReplicaSetsAndSyncRevision(s, d, rsList, false)
	if err != nil {
		return err
	}
	active := activeReplicaSets(append(append([]*appsv1.ReplicaSet(nil), olds...), newRS))
	switch {
	case len(active) == 1:
		scaleReplicaSet(s, d, active[0], replicas(d))
	case len(active) == 0 && newRS != nil:
		scaleReplicaSet(s, d, newRS, replicas(d))
	case len(active) == 0 && len(olds) > 0:
		scaleReplicaSet(s, d, olds[len(olds)-1], replicas(d))
	case newRS != nil && rsReplicas(newRS) == replicas(d) && newRS.Status.AvailableReplicas == replicas(d):
		for _, rs := range activeReplicaSets(olds) {
			scaleReplicaSet(s, d, rs, 0)
		}
	default:
		if !d.Spec.Paused {
			if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
				return rolloutRecreate(s, d, rsList)
			}
			return rolloutRolling(s, d, rsList)
		}
		// Refresh the replica annotations so the scaling event is consumed.
		for _, rs := range active {
			scaleReplicaSet(s, d, rs, rsReplicas(rs))
		}
	}
	if !d.Spec.Paused && DeploymentComplete(d, &d.Status) {
		cleanupDeployment(s, d, olds)
	}
	return syncStatus(s, d, append(olds, newRS), newRS)
}

// cleanupDeployment deletes the oldest fully scaled-down ReplicaSets beyond
// revisionHistoryLimit.
func cleanupDeployment(s *cluster.State, d *appsv1.Deployment, olds []*appsv1.ReplicaSet) {
	if d.Spec.RevisionHistoryLimit == nil {
		return
	}
	var cleanable []*appsv1.ReplicaSet
	for _, rs := range olds {
		if rs != nil && rs.DeletionTimestamp == nil {
			cleanable = append(cleanable, rs)
		}
	}
	diff := len(cleanable) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return
	}
	sortByRevision(cleanable)
	for _, rs := range cleanable[:diff] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		delete(s.ReplicaSets, cluster.Key(rs.Namespace, rs.Name))
		s.Bump()
	}
}

// calculateStatus sums the ReplicaSets' status and sets the Available condition.
func calculateStatus(s *cluster.State, d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) appsv1.DeploymentStatus {
	available := statusSum(all, func(st *appsv1.ReplicaSetStatus) int32 { return st.AvailableReplicas })
	unavailable := max(specReplicaSum(all)-available, 0)
	st := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            statusSum(all, func(st *appsv1.ReplicaSetStatus) int32 { return st.Replicas }),
		UpdatedReplicas:     statusSum([]*appsv1.ReplicaSet{newRS}, func(st *appsv1.ReplicaSetStatus) int32 { return st.Replicas }),
		ReadyReplicas:       statusSum(all, func(st *appsv1.ReplicaSetStatus) int32 { return st.ReadyReplicas }),
		AvailableReplicas:   available,
		UnavailableReplicas: unavailable,
		CollisionCount:      d.Status.CollisionCount,
	}
	st.Conditions = append(st.Conditions, d.Status.Conditions...)
	if available >= replicas(d)-MaxUnavailable(d) {
		setCondition(&st, newCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, MinimumReplicasAvailable,
			"Deployment has minimum availability.", s.Now))
	} else {
		setCondition(&st, newCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, MinimumReplicasUnavailable,
			"Deployment does not have minimum availability.", s.Now))
	}
	return st
}

// syncStatus is syncDeploymentStatus (used for scaling and pauses): status
// without the Progressing bookkeeping.
func syncStatus(s *cluster.State, d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	st := calculateStatus(s, d, nonNil(all), newRS)
	writeStatus(s, d, st)
	return nil
}

// syncRolloutStatus computes status and the Progressing condition, and asks
// to be woken when the progress deadline would pass.
func syncRolloutStatus(s *cluster.State, d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	all = nonNil(all)
	st := calculateStatus(s, d, all, newRS)
	if !hasProgressDeadline(d) {
		removeCondition(&st, appsv1.DeploymentProgressing)
	}
	cur := getCondition(&d.Status, appsv1.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == NewRSAvailableReason
	if hasProgressDeadline(d) && !complete {
		switch {
		case DeploymentComplete(d, &st):
			msg := fmt.Sprintf("Deployment %q has successfully progressed.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name)
			}
			setCondition(&st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewRSAvailableReason, msg, s.Now))
		case deploymentProgressing(d, &st):
			msg := fmt.Sprintf("Deployment %q is progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name)
			}
			c := newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReplicaSetUpdatedReason, msg, s.Now)
			// Progress refreshes lastUpdateTime even when the reason stays the same.
			if cur != nil {
				if cur.Status == corev1.ConditionTrue {
					c.LastTransitionTime = cur.LastTransitionTime
				}
				removeCondition(&st, appsv1.DeploymentProgressing)
			}
			setCondition(&st, c)
		case deploymentTimedOut(d, &st, s.Now):
			msg := fmt.Sprintf("Deployment %q has timed out progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name)
			}
			setCondition(&st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, TimedOutReason, msg, s.Now))
		}
	}
	if c := replicaFailure(all, newRS); c != nil {
		setCondition(&st, *c)
	} else {
		removeCondition(&st, appsv1.DeploymentReplicaFailure)
	}
	writeStatus(s, d, st)
	requeueStuck(s, d)
	return nil
}

// requeueStuck wakes the controller just after the progress deadline of a
// rollout still in progress. It is not a settling timer: `apply` does not
// wait ten minutes for a stuck rollout; `advance` reaches it.
func requeueStuck(s *cluster.State, d *appsv1.Deployment) {
	c := getCondition(&d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || c == nil || c.Reason == NewRSAvailableReason || c.Reason == TimedOutReason {
		return
	}
	at := c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds)*time.Second + time.Second)
	controllerutil.AddTimerOnce(s, cluster.Timer{At: at, Owner: Name, Object: cluster.Key(d.Namespace, d.Name)})
}

// replicaFailure lifts a ReplicaFailure condition of the ReplicaSets (the
// new one first) into a deployment condition.
func replicaFailure(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) *appsv1.DeploymentCondition {
	ordered := all
	if newRS != nil {
		ordered = append([]*appsv1.ReplicaSet{newRS}, oldReplicaSets(all, newRS)...)
	}
	for _, rs := range ordered {
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				return &appsv1.DeploymentCondition{
					Type: appsv1.DeploymentReplicaFailure, Status: c.Status, Reason: c.Reason, Message: c.Message,
					LastUpdateTime: c.LastTransitionTime, LastTransitionTime: c.LastTransitionTime,
				}
			}
		}
	}
	return nil
}

func writeStatus(s *cluster.State, d *appsv1.Deployment, st appsv1.DeploymentStatus) {
	if apiequality.Semantic.DeepEqual(d.Status, st) {
		return
	}
	d.Status = st
	d.ResourceVersion = s.Bump()
}

func nonNil(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil {
			out = append(out, rs)
		}
	}
	return out
}

func regarding(d *appsv1.Deployment) corev1.ObjectReference {
	return cluster.Regarding("Deployment", "apps/v1", d)
}
