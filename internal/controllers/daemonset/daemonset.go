// Package daemonset is the DaemonSet controller (pkg/controller/daemon): one
// pod per eligible node, pinned to it by node affinity and bound by the
// scheduler; the automatic tolerations; RollingUpdate with maxUnavailable
// and maxSurge, or OnDelete; and the DaemonSet status.
package daemonset

import (
	"fmt"
	"slices"
	"strconv"
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
const Name = "daemonset-controller"

// Event reasons (pkg/controller/daemon/daemon_controller.go).
const (
	SuccessfulCreateReason = "SuccessfulCreate"
	SuccessfulDeleteReason = "SuccessfulDelete"
	FailedCreateReason     = "FailedCreate"
	FailedDaemonPodReason  = "FailedDaemonPod"
)

// FailedPodBackoff spaces out the replacement of a daemon pod that failed
// (a kubelet rejection): upstream backs off from 1 s; berth replaces it once
// per FailedPodBackoff, and only under `advance`, so a sync always ends.
const FailedPodBackoff = time.Second

var source = cluster.EventSource{Component: Name}

// Controller implements sim.Controller.
type Controller struct{}

// New returns the DaemonSet controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync reconciles every DaemonSet, in key order.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	return controllerutil.SyncEach(s, s.DaemonSets, "DaemonSet", func(ds *appsv1.DaemonSet) (bool, error) {
		return syncDaemonSet(s, ds)
	})
}

func syncDaemonSet(s *cluster.State, ds *appsv1.DaemonSet) (bool, error) {
	selector, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return false, err
	}
	hash := Hash(ds)
	changed := controllerutil.ClaimPods(s, ds, "apps/v1", "DaemonSet", selector, func(*corev1.Pod) bool { return true })
	ch, manageErr := manage(s, ds, hash)
	changed = changed || ch
	// Upstream runs the rolling update only once its own creations and
	// deletions have been observed; here that is the next round.
	if !ch && manageErr == nil && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		changed = rollingUpdate(s, ds, hash) || changed
	}
	return updateStatus(s, ds, hash) || changed, nil
}

// nodeToDaemonPods maps each target node to the DaemonSet's pods meant for
// it, oldest first; pods without a target node are listed under "".
func nodeToDaemonPods(s *cluster.State, ds *appsv1.DaemonSet) map[string][]*corev1.Pod {
	// One pass in map order, then the DaemonSet's own pods in key order.
	var keys []string
	for k, p := range s.Pods {
		if p.Namespace == ds.Namespace && p.DeletionTimestamp == nil && controllerutil.IsControlledBy(p, string(ds.UID)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := map[string][]*corev1.Pod{}
	for _, k := range keys {
		p := s.Pods[k]
		node, _ := TargetNode(p)
		out[node] = append(out[node], p)
	}
	for _, pods := range out {
		sortByCreationAndPhase(pods)
	}
	return out
}

// manage creates daemon pods on nodes that should run one and lack it, and
// deletes failed pods, surplus pods and pods on nodes that may no longer run
// them (podsShouldBeOnNode).
func manage(s *cluster.State, ds *appsv1.DaemonSet, hash string) (bool, error) {
	byNode := nodeToDaemonPods(s, ds)
	surge := allowsSurge(ds)
	var createOn []string
	var toDelete []*corev1.Pod
	for _, nodeName := range cluster.SortedKeys(s.Nodes) {
		node := s.Nodes[nodeName]
		shouldRun, shouldContinue := NodeShouldRunDaemonPod(node, ds)
		pods := byNode[nodeName]
		switch {
		case shouldRun && len(pods) == 0:
			createOn = append(createOn, nodeName)
		case shouldRun:
			var running []*corev1.Pod
			for _, p := range pods {
				if p.Status.Phase != corev1.PodFailed {
					running = append(running, p)
					continue
				}
				if until := failedAt(p).Add(FailedPodBackoff); until.After(s.Now) {
					// In backoff: replace it later (a non-settling timer, so
					// only `advance` retries a pod the kubelet keeps rejecting).
					controllerutil.AddTimerOnce(s, cluster.Timer{At: until, Owner: Name, Object: cluster.Key(ds.Namespace, ds.Name)})
					continue
				}
				s.Record(source, regarding(ds), corev1.EventTypeWarning, FailedDaemonPodReason,
					fmt.Sprintf("Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, nodeName))
				toDelete = append(toDelete, p)
			}
			toDelete = append(toDelete, surplus(s, ds, running, hash, surge)...)
		case !shouldContinue && len(pods) > 0:
			toDelete = append(toDelete, pods...)
		}
	}
	// Unscheduled pods whose target node is gone (getUnscheduledPodsWithoutNode).
	for _, nodeName := range cluster.SortedKeys(byNode) {
		if _, ok := s.Nodes[nodeName]; ok {
			continue
		}
		for _, p := range byNode[nodeName] {
			if p.Spec.NodeName == "" {
				toDelete = append(toDelete, p)
			}
		}
	}
	return syncNodes(s, ds, toDelete, createOn, hash)
}

// surplus picks the extra pods on one node: without surge all but the
// oldest; with surge at most the oldest new and the oldest old pod, and the
// old one only until the new one is available (or while it is not ready).
func surplus(s *cluster.State, ds *appsv1.DaemonSet, running []*corev1.Pod, hash string, surge bool) []*corev1.Pod {
	if len(running) <= 1 {
		return nil
	}
	if !surge {
		return running[1:]
	}
	var out []*corev1.Pod
	var oldestNew, oldestOld *corev1.Pod
	for _, p := range running {
		if p.Labels[RevisionHashLabel] == hash {
			if oldestNew == nil {
				oldestNew = p
				continue
			}
		} else if oldestOld == nil {
			oldestOld = p
			continue
		}
		out = append(out, p)
	}
	if oldestNew != nil && oldestOld != nil {
		if !controllerutil.IsPodReady(oldestOld) || isAvailable(oldestNew, ds.Spec.MinReadySeconds, s.Now) {
			out = append(out, oldestOld)
		}
	}
	return out
}

func allowsSurge(ds *appsv1.DaemonSet) bool {
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		return false
	}
	maxSurge, _ := surgeAndUnavailable(ds, 1)
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	return ru != nil && ru.MaxSurge != nil && maxSurge > 0
}

// syncNodes deletes pods and creates one pod per node, recording events.
func syncNodes(s *cluster.State, ds *appsv1.DaemonSet, toDelete []*corev1.Pod, createOn []string, hash string) (bool, error) {
	changed := false
	for _, p := range toDelete {
		if _, ok := s.Pods[cluster.Key(p.Namespace, p.Name)]; !ok {
			continue
		}
		s.GracefulDeletePod(p, nil)
		s.Record(source, regarding(ds), corev1.EventTypeNormal, SuccessfulDeleteReason, "Deleted pod: "+p.Name)
		changed = true
	}
	for _, node := range createOn {
		pod := PodForNode(ds, node, hash)
		if err := admission.CreatePod(s, pod); err != nil {
			s.Record(source, regarding(ds), corev1.EventTypeWarning, FailedCreateReason, "Error creating: "+err.Error())
			return changed, err
		}
		s.Record(source, regarding(ds), corev1.EventTypeNormal, SuccessfulCreateReason, "Created pod: "+pod.Name)
		changed = true
	}
	return changed, nil
}

// PodForNode builds the daemon pod for node (CreatePodTemplate plus the
// node pinning): template labels plus controller-revision-hash and
// pod-template-generation, the automatic tolerations, the required node
// affinity `metadata.name In [node]`, generateName "<ds>-".
func PodForNode(ds *appsv1.DaemonSet, node, hash string) *corev1.Pod {
	t := ds.Spec.Template.DeepCopy()
	lbls := map[string]string{}
	for k, v := range t.Labels {
		lbls[k] = v
	}
	if gen, ok := templateGeneration(ds); ok {
		lbls[TemplateGenerationLabel] = strconv.FormatInt(gen, 10)
	}
	if hash != "" {
		lbls[RevisionHashLabel] = hash
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ds.Namespace,
			GenerateName:    ds.Name + "-",
			Labels:          lbls,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{controllerutil.NewControllerRef(ds, "apps/v1", "DaemonSet")},
		},
		Spec: t.Spec,
	}
	AddDaemonTolerations(&pod.Spec)
	pod.Spec.Affinity = PinToNode(pod.Spec.Affinity, node)
	return pod
}

// updateStatus recomputes the status (updateDaemonSetStatus) and writes it
// when it changed.
func updateStatus(s *cluster.State, ds *appsv1.DaemonSet, hash string) bool {
	byNode := nodeToDaemonPods(s, ds)
	var desired, current, misscheduled, ready, available, updated int32
	var nextAvailable time.Time
	for _, nodeName := range cluster.SortedKeys(s.Nodes) {
		shouldRun, _ := NodeShouldRunDaemonPod(s.Nodes[nodeName], ds)
		pods := activeOnly(byNode[nodeName])
		if !shouldRun {
			if len(pods) > 0 {
				misscheduled++
			}
			continue
		}
		desired++
		if len(pods) == 0 {
			continue
		}
		current++
		pod := pods[0]
		if controllerutil.IsPodReady(pod) {
			ready++
			if isAvailable(pod, ds.Spec.MinReadySeconds, s.Now) {
				available++
			} else if at := controllerutil.AvailableAt(pod, ds.Spec.MinReadySeconds); nextAvailable.IsZero() || at.Before(nextAvailable) {
				nextAvailable = at
			}
		}
		if isPodUpdated(ds, pod, hash) {
			updated++
		}
	}
	if !nextAvailable.IsZero() {
		controllerutil.AddTimerOnce(s, cluster.Timer{At: nextAvailable.Add(time.Second), Owner: Name, Object: cluster.Key(ds.Namespace, ds.Name), Settling: true})
	}
	st := ds.Status.DeepCopy()
	st.DesiredNumberScheduled = desired
	st.CurrentNumberScheduled = current
	st.NumberMisscheduled = misscheduled
	st.NumberReady = ready
	st.NumberAvailable = available
	st.UpdatedNumberScheduled = updated
	st.NumberUnavailable = desired - available
	st.ObservedGeneration = ds.Generation
	if apiequality.Semantic.DeepEqual(*st, ds.Status) {
		return false
	}
	ds.Status = *st
	ds.ResourceVersion = s.Bump()
	return true
}

// failedAt is the latest transition the pod recorded (a rejected pod has
// no start time), or its creation.
func failedAt(p *corev1.Pod) time.Time {
	t := p.CreationTimestamp.Time
	for _, c := range p.Status.Conditions {
		if c.LastTransitionTime.Time.After(t) {
			t = c.LastTransitionTime.Time
		}
	}
	return t
}

// activeOnly drops finished pods (a failed pod awaiting replacement does not count).
func activeOnly(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if controllerutil.IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

func regarding(ds *appsv1.DaemonSet) corev1.ObjectReference {
	return cluster.Regarding("DaemonSet", "apps/v1", ds)
}
