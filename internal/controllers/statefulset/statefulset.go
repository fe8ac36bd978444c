// Package statefulset is the StatefulSet controller (pkg/controller/statefulset):
// stable pods <set>-<ordinal> created with their claims, OrderedReady or
// Parallel scaling, RollingUpdate (highest ordinal first, down to the
// partition) or OnDelete, claim retention, and the StatefulSet status.
package statefulset

import (
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/admission"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// Name is the controller's name and its events' source component.
const Name = "statefulset-controller"

// Event reasons (stateful_pod_control.go: "Successful"/"Failed" + verb).
const (
	SuccessfulCreateReason = "SuccessfulCreate"
	SuccessfulDeleteReason = "SuccessfulDelete"
	FailedCreateReason     = "FailedCreate"
)

var source = cluster.EventSource{Component: Name}

// Controller implements sim.Controller.
type Controller struct{}

// New returns the StatefulSet controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync reconciles every StatefulSet in key order, then deletes claims whose
// owning set is gone under whenDeleted: Delete (the garbage collector's part).
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	ix := newPodIndex(s)
	changed, err := controllerutil.SyncEach(s, s.StatefulSets, "StatefulSet", func(set *appsv1.StatefulSet) (bool, error) {
		return syncSet(s, ix, set)
	})
	if err != nil {
		return changed, err
	}
	return collectClaims(s) || changed, nil
}

type setPods struct {
	replicas  []*corev1.Pod // index = ordinal, nil when missing
	condemned []*corev1.Pod // ordinals >= replicas, ascending
}

func syncSet(s *cluster.State, ix *podIndex, set *appsv1.StatefulSet) (bool, error) {
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		return false, err
	}
	// Only orphans named as members of the set are adopted.
	changed := controllerutil.ClaimPodsAmong(s, ix.claimKeys(set), set, "apps/v1", "StatefulSet", selector, func(p *corev1.Pod) bool { return ordinalOf(set, p) >= 0 })
	ix.claimed(changed)
	updateRevision := RevisionName(set)
	currentRevision := set.Status.CurrentRevision
	if currentRevision == "" {
		currentRevision = updateRevision
	}
	pods := split(set, ix.owned(set))
	ch, err := reconcile(s, ix, set, pods, currentRevision, updateRevision)
	changed = changed || ch
	return updateStatus(s, set, split(set, ix.owned(set)), currentRevision, updateRevision) || changed, err
}

// collect splits the set's pods into the wanted ordinals and the condemned
// ones, walking every pod: the plain computation the pass index replaces,
// kept for the tests that compare the two.
func collect(s *cluster.State, set *appsv1.StatefulSet) setPods {
	var owned []*corev1.Pod
	for _, k := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[k]
		if p.Namespace == set.Namespace && controllerutil.IsControlledBy(p, string(set.UID)) {
			owned = append(owned, p)
		}
	}
	return split(set, owned)
}

// split sorts the set's pods, given in key order, into ordinals.
func split(set *appsv1.StatefulSet, owned []*corev1.Pod) setPods {
	n := int(replicas(set))
	out := setPods{replicas: make([]*corev1.Pod, n)}
	for _, p := range owned {
		i := ordinalOf(set, p)
		switch {
		case i < 0:
		case i < n:
			out.replicas[i] = p
		default:
			out.condemned = append(out.condemned, p)
		}
	}
	sort.Slice(out.condemned, func(a, b int) bool { return ordinalOf(set, out.condemned[a]) < ordinalOf(set, out.condemned[b]) })
	return out
}

// reconcile is updateStatefulSet's one pass: replace finished pods, create
// missing ones (with their claims), delete condemned ones from the highest
// ordinal, then roll out the update revision. With OrderedReady each step
// waits for every lower ordinal to be Running and Ready.
func reconcile(s *cluster.State, ix *podIndex, set *appsv1.StatefulSet, pods setPods, currentRevision, updateRevision string) (bool, error) {
	monotonic := set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	changed := false
	for i, pod := range pods.replicas {
		if pod != nil && cluster.IsTerminal(pod) {
			if pod.DeletionTimestamp == nil {
				deletePod(s, set, pod)
				changed = true
			}
			if _, ok := s.Pods[cluster.Key(pod.Namespace, pod.Name)]; ok {
				continue // the replacement waits until the old object is gone
			}
			pods.replicas[i], pod = nil, nil
		}
		if pod == nil {
			pod = podForOrdinal(s, set, pods, i, currentRevision, updateRevision)
			ix.add(set, cluster.Key(pod.Namespace, pod.Name))
			if err := createPod(s, set, pod, i); err != nil {
				return changed, err
			}
			pods.replicas[i] = pod
			changed = true
			if monotonic {
				return true, nil
			}
			continue
		}
		if pod.DeletionTimestamp != nil {
			// A pod being deleted keeps its name until its kubelet (or the
			// pod GC) removes it: the replacement cannot be created before,
			// and with OrderedReady nothing after it moves either
			// (docs/node-lifecycle.md#statefulsets-on-a-lost-node).
			if monotonic {
				return changed, nil
			}
			continue
		}
		if !ensureClaims(s, set, pod, i) {
			changed = true
		}
		if monotonic && !isHealthy(s, set, pod) {
			return changed, nil
		}
	}
	// Scale down from the highest ordinal; unhealthy pods go first, one at a time.
	var firstUnhealthy *corev1.Pod
	for _, p := range append(append([]*corev1.Pod(nil), pods.replicas...), pods.condemned...) {
		if p != nil && (!isRunningAndReady(p) || p.DeletionTimestamp != nil) {
			firstUnhealthy = p
			break
		}
	}
	for t := len(pods.condemned) - 1; t >= 0; t-- {
		p := pods.condemned[t]
		if p.DeletionTimestamp != nil {
			if monotonic {
				return changed, nil // wait for it to go before the next one
			}
			continue
		}
		if monotonic && firstUnhealthy != nil && p != firstUnhealthy {
			return changed, nil
		}
		releaseClaimsOnScaleDown(s, set, p)
		deletePod(s, set, p)
		changed = true
		if monotonic {
			return true, nil
		}
	}
	if changed && !monotonic {
		return true, nil
	}
	if set.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		return changed, nil
	}
	// RollingUpdate: from the highest ordinal down to the partition, replace
	// one pod not at the update revision, waiting for each to be healthy.
	for t := len(pods.replicas) - 1; t >= partition(set); t-- {
		p := pods.replicas[t]
		if p.Labels[RevisionHashLabel] != updateRevision && p.DeletionTimestamp == nil {
			deletePod(s, set, p)
			return true, nil
		}
		if !isHealthy(s, set, p) {
			return changed, nil
		}
	}
	return changed, nil
}

// podForOrdinal is newVersionedStatefulSetPod: ordinals below the partition
// keep the current revision, the others get the update revision.
func podForOrdinal(s *cluster.State, set *appsv1.StatefulSet, pods setPods, ordinal int, currentRevision, updateRevision string) *corev1.Pod {
	if currentRevision != updateRevision && set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		ru := set.Spec.UpdateStrategy.RollingUpdate
		useCurrent := (ru == nil && int32(ordinal) < set.Status.CurrentReplicas) || (ru != nil && ordinal < partition(set))
		if useCurrent {
			for _, p := range append(append([]*corev1.Pod(nil), pods.replicas...), pods.condemned...) {
				if p != nil && p.Labels[RevisionHashLabel] == currentRevision {
					return newPod(set, templateFromPod(p), ordinal, currentRevision)
				}
			}
		}
	}
	return newPod(set, &set.Spec.Template, ordinal, updateRevision)
}

// isHealthy is Running, Ready and available for minReadySeconds; a pod
// becoming available later wakes the controller then.
func isHealthy(s *cluster.State, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	if !isRunningAndReady(pod) || pod.DeletionTimestamp != nil {
		return false
	}
	if controllerutil.IsPodAvailable(pod, set.Spec.MinReadySeconds, s.Now) {
		return true
	}
	at := controllerutil.AvailableAt(pod, set.Spec.MinReadySeconds)
	controllerutil.AddTimerOnce(s, cluster.Timer{At: at.Add(time.Second), Owner: Name, Object: cluster.Key(set.Namespace, set.Name), Settling: true})
	return false
}

// createPod creates the pod's missing claims, then the pod, with the
// upstream events.
func createPod(s *cluster.State, set *appsv1.StatefulSet, pod *corev1.Pod, ordinal int) error {
	ensureClaims(s, set, pod, ordinal)
	if err := admission.CreatePod(s, pod); err != nil {
		s.Record(source, regarding(set), corev1.EventTypeWarning, FailedCreateReason,
			fmt.Sprintf("create Pod %s in StatefulSet %s failed error: %v", pod.Name, set.Name, err))
		return err
	}
	s.Record(source, regarding(set), corev1.EventTypeNormal, SuccessfulCreateReason,
		fmt.Sprintf("create Pod %s in StatefulSet %s successful", pod.Name, set.Name))
	return nil
}

// ensureClaims creates the claims of pod that do not exist yet and reports
// whether all were already there.
func ensureClaims(s *cluster.State, set *appsv1.StatefulSet, pod *corev1.Pod, ordinal int) bool {
	all := true
	for _, c := range newClaims(set, ordinal) {
		if _, ok := s.PersistentVolumeClaims[cluster.Key(c.Namespace, c.Name)]; ok {
			continue
		}
		all = false
		if err := admission.Create(s, c); err != nil {
			s.Record(source, regarding(set), corev1.EventTypeWarning, FailedCreateReason,
				fmt.Sprintf("create Claim %s for Pod %s in StatefulSet %s failed error: %v", c.Name, pod.Name, set.Name, err))
			continue
		}
		s.Record(source, regarding(set), corev1.EventTypeNormal, SuccessfulCreateReason,
			fmt.Sprintf("create Claim %s Pod %s in StatefulSet %s success", c.Name, pod.Name, set.Name))
	}
	return all
}

// releaseClaimsOnScaleDown deletes a condemned pod's claims under
// whenScaled: Delete (upstream hands them to the pod as owner and the
// garbage collector removes them with it).
func releaseClaimsOnScaleDown(s *cluster.State, set *appsv1.StatefulSet, pod *corev1.Pod) {
	p := set.Spec.PersistentVolumeClaimRetentionPolicy
	if p == nil || p.WhenScaled != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		return
	}
	for _, ct := range set.Spec.VolumeClaimTemplates {
		key := cluster.Key(set.Namespace, ClaimName(set, ct.Name, ordinalOf(set, pod)))
		if _, ok := s.PersistentVolumeClaims[key]; ok {
			pvc := s.PersistentVolumeClaims[key]
			delete(s.PersistentVolumeClaims, key)
			s.Bump()
			s.ObjectDeleted(pvc)
		}
	}
}

// collectClaims deletes claims owned by a StatefulSet that no longer exists.
func collectClaims(s *cluster.State) bool {
	live := map[string]bool{}
	for _, k := range cluster.SortedKeys(s.StatefulSets) {
		live[string(s.StatefulSets[k].UID)] = true
	}
	changed := false
	for _, k := range cluster.SortedKeys(s.PersistentVolumeClaims) {
		for _, ref := range s.PersistentVolumeClaims[k].OwnerReferences {
			if ref.Kind == "StatefulSet" && ref.APIVersion == "apps/v1" && !live[string(ref.UID)] {
				delete(s.PersistentVolumeClaims, k)
				s.Bump()
				changed = true
				break
			}
		}
	}
	return changed
}

func deletePod(s *cluster.State, set *appsv1.StatefulSet, pod *corev1.Pod) {
	s.GracefulDeletePod(pod, nil)
	s.Record(source, regarding(set), corev1.EventTypeNormal, SuccessfulDeleteReason,
		fmt.Sprintf("delete Pod %s in StatefulSet %s successful", pod.Name, set.Name))
}

// updateStatus recomputes the status and writes it when it changed; a
// finished RollingUpdate makes the update revision current.
func updateStatus(s *cluster.State, set *appsv1.StatefulSet, pods setPods, currentRevision, updateRevision string) bool {
	st := set.Status.DeepCopy()
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas, st.UpdatedReplicas = 0, 0, 0, 0, 0
	for _, p := range append(append([]*corev1.Pod(nil), pods.replicas...), pods.condemned...) {
		if p == nil || cluster.IsTerminal(p) {
			continue
		}
		st.Replicas++
		if isRunningAndReady(p) {
			st.ReadyReplicas++
			if controllerutil.IsPodAvailable(p, set.Spec.MinReadySeconds, s.Now) {
				st.AvailableReplicas++
			}
		}
		if p.DeletionTimestamp != nil {
			continue // counted as a replica, but of no revision
		}
		if p.Labels[RevisionHashLabel] == currentRevision {
			st.CurrentReplicas++
		}
		if p.Labels[RevisionHashLabel] == updateRevision {
			st.UpdatedReplicas++
		}
	}
	st.CurrentRevision, st.UpdateRevision = currentRevision, updateRevision
	st.ObservedGeneration = set.Generation
	if st.CollisionCount == nil {
		st.CollisionCount = new(int32)
	}
	if set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		st.UpdatedReplicas == st.Replicas && st.ReadyReplicas == st.Replicas {
		st.CurrentReplicas = st.UpdatedReplicas
		st.CurrentRevision = st.UpdateRevision
	}
	if apiequality.Semantic.DeepEqual(*st, set.Status) {
		return false
	}
	set.Status = *st
	set.ResourceVersion = s.Bump()
	return true
}

func replicas(set *appsv1.StatefulSet) int32 {
	if set.Spec.Replicas == nil {
		return 1
	}
	return *set.Spec.Replicas
}

func partition(set *appsv1.StatefulSet) int {
	ru := set.Spec.UpdateStrategy.RollingUpdate
	if ru == nil || ru.Partition == nil {
		return 0
	}
	return int(*ru.Partition)
}

func regarding(set *appsv1.StatefulSet) corev1.ObjectReference {
	return cluster.Regarding("StatefulSet", "apps/v1", set)
}
