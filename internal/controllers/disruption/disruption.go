// Package disruption is the disruption controller (pkg/controller/disruption)
// and the PodDisruptionBudget check of the eviction subresource
// (pkg/registry/core/pod/storage/eviction.go): the controller keeps every
// PDB's status (healthy and expected pods, allowed disruptions, the
// DisruptionAllowed condition) in step with the pods, and Evict refuses an
// eviction that the budget does not allow.
package disruption

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// Name is the controller's name and its events' source component.
const Name = "disruption-controller"

// Event reasons and condition texts of the upstream controller.
const (
	ReasonNoPods             = "NoPods"
	ReasonCalculateFailed    = "CalculateExpectedPodCountFailed"
	MessageNoPods            = "No matching pods found"
	conditionSyncFailed      = "SyncFailed"
	defaultUnhealthyPolicyIf = policyv1.IfHealthyBudget
)

var source = cluster.EventSource{Component: Name}

// Controller implements sim.Controller.
type Controller struct{}

// New returns the disruption controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync recomputes the status of every PDB and stores the ones that changed.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	changed := false
	for _, key := range cluster.SortedKeys(s.PodDisruptionBudgets) {
		pdb := s.PodDisruptionBudgets[key]
		status, warn := computeStatus(s, pdb)
		newGeneration := pdb.Status.ObservedGeneration != pdb.Generation
		if apiequality.Semantic.DeepEqual(status, pdb.Status) {
			continue
		}
		// Events are recorded once per spec generation: the simulator has no
		// periodic resync that would repeat them.
		if newGeneration && warn != nil {
			s.Record(source, regarding(pdb), warn.eventType, warn.reason, warn.message)
		}
		pdb.Status = status
		pdb.ResourceVersion = s.Bump()
		changed = true
	}
	return changed, nil
}

type event struct{ eventType, reason, message string }

// computeStatus is the controller's trySync: the pods the selector picks,
// how many must stay healthy, and how many may go.
func computeStatus(s *cluster.State, pdb *policyv1.PodDisruptionBudget) (policyv1.PodDisruptionBudgetStatus, *event) {
	pods := MatchingPods(s, pdb)
	var warn *event
	if len(pods) == 0 {
		warn = &event{corev1.EventTypeNormal, ReasonNoPods, MessageNoPods}
	}
	expected, desired, err := expectedPodCount(s, pdb, pods)
	if err != nil {
		return failSafe(s, pdb, err), &event{corev1.EventTypeWarning, ReasonCalculateFailed,
			fmt.Sprintf("Failed to calculate the number of expected pods: %v", err)}
	}
	healthy := countHealthy(pods)
	allowed := max(healthy-desired, 0)
	status := policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation,
		// Evicted pods are deleted at once in the simulator, so no entry of
		// the disrupted-pods map outlives the sync after its eviction.
		DisruptedPods:      nil,
		DisruptionsAllowed: int32(allowed),
		CurrentHealthy:     int32(healthy),
		DesiredHealthy:     int32(desired),
		ExpectedPods:       int32(expected),
		Conditions:         copyConditions(pdb.Status.Conditions),
	}
	setAllowedCondition(s, pdb, &status, "")
	return status, warn
}

// failSafe is the status the controller writes when it cannot compute one:
// no disruption allowed.
func failSafe(s *cluster.State, pdb *policyv1.PodDisruptionBudget, err error) policyv1.PodDisruptionBudgetStatus {
	status := *pdb.Status.DeepCopy()
	status.ObservedGeneration = pdb.Generation
	status.DisruptionsAllowed = 0
	setAllowedCondition(s, pdb, &status, err.Error())
	return status
}

// setAllowedCondition is UpdateDisruptionAllowedCondition: True with
// SufficientPods while a disruption is allowed, False with InsufficientPods
// (or SyncFailed and the error) otherwise.
func setAllowedCondition(s *cluster.State, pdb *policyv1.PodDisruptionBudget, status *policyv1.PodDisruptionBudgetStatus, syncErr string) {
	cond := metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		ObservedGeneration: pdb.Generation,
		LastTransitionTime: metav1.NewTime(s.Now),
	}
	switch {
	case syncErr != "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, conditionSyncFailed, syncErr
	case status.DisruptionsAllowed > 0:
		cond.Status, cond.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	default:
		cond.Status, cond.Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
	}
	meta.SetStatusCondition(&status.Conditions, cond)
}

func copyConditions(in []metav1.Condition) []metav1.Condition {
	if in == nil {
		return nil
	}
	return append([]metav1.Condition(nil), in...)
}

// MatchingPods returns the pods in the PDB's namespace that its selector
// picks, sorted by name. A nil selector picks none; in policy/v1 an empty
// selector picks every pod of the namespace.
func MatchingPods(s *cluster.State, pdb *policyv1.PodDisruptionBudget) []*corev1.Pod {
	if pdb.Spec.Selector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil
	}
	var out []*corev1.Pod
	for _, k := range cluster.SortedKeys(s.Pods) {
		p := s.Pods[k]
		if p.Namespace == pdb.Namespace && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

// countHealthy counts the pods that are not being deleted and are Ready.
func countHealthy(pods []*corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.DeletionTimestamp == nil && !cluster.IsTerminal(p) && controllerutil.IsPodReady(p) {
			n++
		}
	}
	return n
}

// expectedPodCount is getExpectedPodCount: with an integer minAvailable the
// expected count is the number of pods; otherwise it is the scale of the
// pods' controllers and percentages resolve against it (rounding up).
func expectedPodCount(s *cluster.State, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if expected, err = expectedScale(s, pods); err != nil {
			return 0, 0, err
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, expected, true)
		if err != nil {
			return 0, 0, err
		}
		desired = max(expected-maxUnavailable, 0)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		desired = pdb.Spec.MinAvailable.IntValue()
		expected = len(pods)
	case pdb.Spec.MinAvailable != nil:
		if expected, err = expectedScale(s, pods); err != nil {
			return 0, 0, err
		}
		if desired, err = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, expected, true); err != nil {
			return 0, 0, err
		}
	}
	return expected, desired, nil
}

// expectedScale sums the desired replicas of the distinct controllers of the
// pods (a Deployment through its ReplicaSet, a bare ReplicaSet, a
// StatefulSet). Pods without such a controller make the count impossible.
func expectedScale(s *cluster.State, pods []*corev1.Pod) (int, error) {
	scales := map[string]int{}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			return 0, fmt.Errorf("found no controller ref for pod %q", p.Name)
		}
		uid, scale, ok := controllerScale(s, p.Namespace, ref)
		if !ok {
			return 0, fmt.Errorf("found no controllers for pod %q", p.Name)
		}
		scales[uid] = scale
	}
	total := 0
	for _, uid := range cluster.SortedKeys(scales) {
		total += scales[uid]
	}
	return total, nil
}

// controllerScale finds the scalable controller behind a pod's controller
// reference and returns its uid and spec.replicas.
func controllerScale(s *cluster.State, namespace string, ref *metav1.OwnerReference) (string, int, bool) {
	switch ref.Kind {
	case "ReplicaSet":
		rs, ok := s.ReplicaSets[cluster.Key(namespace, ref.Name)]
		if !ok || rs.UID != ref.UID {
			return "", 0, false
		}
		if dref := metav1.GetControllerOf(rs); dref != nil && dref.Kind == "Deployment" {
			d, ok := s.Deployments[cluster.Key(namespace, dref.Name)]
			if !ok || d.UID != dref.UID {
				return "", 0, false
			}
			return string(d.UID), replicas(d.Spec.Replicas), true
		}
		return string(rs.UID), replicas(rs.Spec.Replicas), true
	case "StatefulSet":
		sts, ok := s.StatefulSets[cluster.Key(namespace, ref.Name)]
		if !ok || sts.UID != ref.UID {
			return "", 0, false
		}
		return string(sts.UID), replicas(sts.Spec.Replicas), true
	}
	return "", 0, false
}

func replicas(p *int32) int {
	if p == nil {
		return 1
	}
	return int(*p)
}

func regarding(pdb *policyv1.PodDisruptionBudget) corev1.ObjectReference {
	return cluster.Regarding("PodDisruptionBudget", "policy/v1", pdb)
}
