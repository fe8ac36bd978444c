package scaledown

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/autoscaler/config"
)

// Annotations cluster-autoscaler reads on pods and nodes.
const (
	AnnotationSafeToEvict             = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	AnnotationSafeToEvictLocalVolumes = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
	AnnotationScaleDownDisabled       = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
	annotationMirror                  = "kubernetes.io/config.mirror"
)

// BlockingPod is a pod that keeps its node, and why (cluster-autoscaler's
// drain reasons: NotSafeToEvictAnnotation, NotReplicated,
// UnmovableKubeSystemPod, LocalStorageRequested, NotEnoughPdb, ...).
type BlockingPod struct {
	Pod    *corev1.Pod
	Reason string
}

func isDaemonSetPod(p *corev1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet"
}

func isMirrorPod(p *corev1.Pod) bool {
	_, ok := p.Annotations[annotationMirror]
	return ok
}

// replicatedKinds are the controllers cluster-autoscaler knows recreate
// a pod elsewhere.
var replicatedKinds = map[string]bool{"ReplicaSet": true, "ReplicationController": true, "Job": true, "StatefulSet": true}

// blocking applies cluster-autoscaler's drain rules to one pod that would
// have to move, in CA's order: safe-to-evict "true" lets the pod go
// without further checks (PDB included: the eviction honours it later);
// then not replicated, an unprotected kube-system pod, safe-to-evict
// "false", local storage, a PDB with no disruption left
// (docs/cluster-autoscaler.md#scale-down).
func blocking(p *corev1.Pod, o config.Options, pdbs []*policyv1.PodDisruptionBudget) string {
	if p.Annotations[AnnotationSafeToEvict] == "true" {
		return ""
	}
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return "NotReplicated"
	}
	if !replicatedKinds[ref.Kind] && o.SkipNodesWithCustomControllerPods {
		return "NotReplicated"
	}
	if p.Namespace == metav1.NamespaceSystem && o.SkipNodesWithSystemPods && len(matching(p, pdbs)) == 0 {
		return "UnmovableKubeSystemPod"
	}
	if p.Annotations[AnnotationSafeToEvict] == "false" {
		return "NotSafeToEvictAnnotation"
	}
	if o.SkipNodesWithLocalStorage && hasBlockingLocalStorage(p) {
		return "LocalStorageRequested"
	}
	return pdbReason(p, pdbs)
}

func pdbReason(p *corev1.Pod, pdbs []*policyv1.PodDisruptionBudget) string {
	for _, pdb := range matching(p, pdbs) {
		if pdb.Status.DisruptionsAllowed < 1 {
			return "NotEnoughPdb"
		}
	}
	return ""
}

func matching(p *corev1.Pod, pdbs []*policyv1.PodDisruptionBudget) []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, pdb := range pdbs {
		if pdb.Namespace != p.Namespace || pdb.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out
}

// hasBlockingLocalStorage: an emptyDir not in memory or a hostPath volume,
// unless safe-to-evict-local-volumes names every such volume.
func hasBlockingLocalStorage(p *corev1.Pod) bool {
	safe := map[string]bool{}
	for _, v := range strings.Split(p.Annotations[AnnotationSafeToEvictLocalVolumes], ",") {
		if v = strings.TrimSpace(v); v != "" {
			safe[v] = true
		}
	}
	for _, v := range p.Spec.Volumes {
		local := v.HostPath != nil || (v.EmptyDir != nil && v.EmptyDir.Medium != corev1.StorageMediumMemory)
		if local && !safe[v.Name] {
			return true
		}
	}
	return false
}
