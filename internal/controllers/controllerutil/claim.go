package controllerutil

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/cluster"
)

// ClaimPodsAmong is ClaimPods over candidate pod keys instead of every pod
// of the state (docs/simulation-speed.md#workload-controllers-pod-index-session-22).
// keys must include every pod the owner controls and every orphan it could
// adopt; extra, missing or repeated keys are harmless, since each pod is
// looked up and judged afresh exactly as ClaimPods judges it. The writes go
// in key order, as ClaimPods's do.
func ClaimPodsAmong(s *cluster.State, keys []string, owner metav1.Object, apiVersion, kind string, selector labels.Selector, canAdopt func(*corev1.Pod) bool) bool {
	var adopt, release []string
	for _, k := range keys {
		p, ok := s.Pods[k]
		if !ok || p.Namespace != owner.GetNamespace() || p.DeletionTimestamp != nil {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(p)
		if ref != nil && ref.UID != owner.GetUID() {
			continue
		}
		// canAdopt first: for an orphan it is the cheaper test, and the
		// outcome is the same conjunction ClaimPods evaluates.
		switch {
		case ref == nil && canAdopt(p) && IsPodActive(p) && selector.Matches(labels.Set(p.Labels)):
			adopt = append(adopt, k)
		case ref != nil && !selector.Matches(labels.Set(p.Labels)):
			release = append(release, k)
		}
	}
	if len(adopt) == 0 && len(release) == 0 {
		return false
	}
	slices.Sort(adopt)
	adopt = slices.Compact(adopt)
	slices.Sort(release)
	release = slices.Compact(release)
	// Merge the two sorted lists so every write follows key order.
	for len(adopt) > 0 || len(release) > 0 {
		if len(release) == 0 || (len(adopt) > 0 && adopt[0] < release[0]) {
			p := s.Pods[adopt[0]]
			p.OwnerReferences = append(p.OwnerReferences, NewControllerRef(owner, apiVersion, kind))
			p.ResourceVersion = s.Bump()
			adopt = adopt[1:]
			continue
		}
		ReleasePod(s.Pods[release[0]], owner.GetUID())
		s.Pods[release[0]].ResourceVersion = s.Bump()
		release = release[1:]
	}
	return true
}
