package disruption

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// Texts of the eviction subresource (pkg/registry/core/pod/storage/eviction.go).
const (
	MessageViolatesBudget = "Cannot evict pod as it would violate the pod's disruption budget."
	MessageMultipleBudget = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
	// EvictionReason marks an evicted pod's DisruptionTarget condition.
	EvictionReason  = "EvictionByEvictionAPI"
	EvictionMessage = "Eviction API: evicting"
)

// EvictionError is a refused eviction with the API status code it carries:
// 429 (TooManyRequests) means "retry later", anything else is final.
type EvictionError struct {
	Code    int
	Message string
}

func (e *EvictionError) Error() string { return e.Message }

// Retryable reports whether a client should try the eviction again later.
func (e *EvictionError) Retryable() bool { return e.Code == http.StatusTooManyRequests }

// Evict is a POST to pods/eviction: the pod is deleted unless a
// PodDisruptionBudget forbids it, in which case the budget is left as it
// was. A granted eviction takes one allowed disruption from the budget and
// records the pod among its disrupted pods until the controller resyncs.
func Evict(s *cluster.State, pod *corev1.Pod) error {
	key := cluster.Key(pod.Namespace, pod.Name)
	if _, ok := s.Pods[key]; !ok {
		return &EvictionError{Code: http.StatusNotFound, Message: fmt.Sprintf("pods %q not found", pod.Name)}
	}
	// Terminal, pending and already-deleting pods do not count against a
	// budget: they are deleted without looking at it.
	if !canIgnoreBudget(pod) {
		pdbs := budgetsFor(s, pod)
		if len(pdbs) > 1 {
			return &EvictionError{Code: http.StatusInternalServerError, Message: MessageMultipleBudget}
		}
		if len(pdbs) == 1 {
			if err := checkAndDecrement(s, pod, pdbs[0]); err != nil {
				return err
			}
		}
	}
	// The pod is deleted with its own grace period; it stays Terminating
	// until its kubelet has stopped it (docs/node-lifecycle.md).
	if !cluster.IsTerminal(pod) && pod.DeletionTimestamp == nil {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(s.Now),
			Reason:             EvictionReason, Message: EvictionMessage,
		})
	}
	s.GracefulDeletePod(pod, nil)
	return nil
}

func canIgnoreBudget(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil || cluster.IsTerminal(pod) || pod.Status.Phase == corev1.PodPending
}

// budgetsFor returns the PDBs in the pod's namespace whose selector picks it.
func budgetsFor(s *cluster.State, pod *corev1.Pod) []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, k := range cluster.SortedKeys(s.PodDisruptionBudgets) {
		pdb := s.PodDisruptionBudgets[k]
		if pdb.Namespace != pod.Namespace {
			continue
		}
		for _, p := range MatchingPods(s, pdb) {
			if p.Name == pod.Name {
				out = append(out, pdb)
				break
			}
		}
	}
	return out
}

// checkAndDecrement grants the eviction against one budget or refuses it.
// An unready pod may go whenever the budget is already met (policy
// IfHealthyBudget, the default) or always (AlwaysAllow), without using up
// an allowed disruption.
func checkAndDecrement(s *cluster.State, pod *corev1.Pod, pdb *policyv1.PodDisruptionBudget) error {
	if !controllerutil.IsPodReady(pod) {
		policy := defaultUnhealthyPolicyIf
		if pdb.Spec.UnhealthyPodEvictionPolicy != nil {
			policy = *pdb.Spec.UnhealthyPodEvictionPolicy
		}
		if policy == policyv1.AlwaysAllow ||
			(pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0) {
			return nil
		}
	}
	if pdb.Status.ObservedGeneration < pdb.Generation || pdb.Status.DisruptionsAllowed <= 0 {
		return &EvictionError{Code: http.StatusTooManyRequests, Message: MessageViolatesBudget}
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[pod.Name] = metav1.NewTime(s.Now)
	pdb.ResourceVersion = s.Bump()
	return nil
}
