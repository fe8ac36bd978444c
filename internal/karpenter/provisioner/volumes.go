package provisioner

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// claimOf returns the claim a pod volume uses: a persistentVolumeClaim
// volume's claim, or the claim of a generic ephemeral volume; nil for
// other volumes.
func claimOf(s *cluster.State, pod *corev1.Pod, v corev1.Volume) (*corev1.PersistentVolumeClaim, error) {
	var name string
	switch {
	case v.PersistentVolumeClaim != nil:
		name = v.PersistentVolumeClaim.ClaimName
	case v.Ephemeral != nil:
		name = pod.Name + "-" + v.Name
	default:
		return nil, nil
	}
	pvc, ok := s.PersistentVolumeClaims[cluster.Key(pod.Namespace, name)]
	if !ok {
		return nil, fmt.Errorf("persistentvolumeclaims %q not found", name)
	}
	return pvc, nil
}

// validateClaims ignores a pod whose claims cannot be resolved: a missing
// claim, a bound claim whose volume is gone, an unbound claim without a
// storage class or with one that does not exist.
func validateClaims(s *cluster.State, pod *corev1.Pod) error {
	for _, v := range pod.Spec.Volumes {
		pvc, err := claimOf(s, pod, v)
		if err != nil {
			return err
		}
		if pvc == nil {
			continue
		}
		if pvc.Spec.VolumeName != "" {
			if _, ok := s.PersistentVolumes[pvc.Spec.VolumeName]; !ok {
				return fmt.Errorf("failed to validate pvc, persistentvolumes %q not found", pvc.Spec.VolumeName)
			}
			continue
		}
		sc := ""
		if pvc.Spec.StorageClassName != nil {
			sc = *pvc.Spec.StorageClassName
		}
		if sc == "" {
			return fmt.Errorf("unbound pvc must define a storage class")
		}
		if _, ok := s.StorageClasses[sc]; !ok {
			return fmt.Errorf("failed to validate storage class, storageclasses.storage.k8s.io %q not found", sc)
		}
	}
	return nil
}

// injectVolumeTopology returns the pod with its volumes' topology ANDed into
// every required node-affinity term: a bound volume's node affinity (its
// first term, without hostname for local volumes), or an unbound claim's
// storage class allowedTopologies (its first term). Karpenter does the same
// before solving, so new nodes land where the volumes can attach.
func injectVolumeTopology(s *cluster.State, pod *corev1.Pod) *corev1.Pod {
	var reqs []corev1.NodeSelectorRequirement
	for _, v := range pod.Spec.Volumes {
		pvc, err := claimOf(s, pod, v)
		if err != nil || pvc == nil {
			continue
		}
		if pvc.Spec.VolumeName != "" {
			pv := s.PersistentVolumes[pvc.Spec.VolumeName]
			if pv == nil || pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil || len(pv.Spec.NodeAffinity.Required.NodeSelectorTerms) == 0 {
				continue
			}
			for _, r := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions {
				if (pv.Spec.Local != nil || pv.Spec.HostPath != nil) && r.Key == corev1.LabelHostname {
					continue
				}
				reqs = append(reqs, r)
			}
			continue
		}
		if pvc.Spec.StorageClassName == nil {
			continue
		}
		if sc := s.StorageClasses[*pvc.Spec.StorageClassName]; sc != nil && len(sc.AllowedTopologies) > 0 {
			for _, e := range sc.AllowedTopologies[0].MatchLabelExpressions {
				reqs = append(reqs, corev1.NodeSelectorRequirement{Key: e.Key, Operator: corev1.NodeSelectorOpIn, Values: e.Values})
			}
		}
	}
	if len(reqs) == 0 {
		return pod
	}
	out := pod.DeepCopy()
	if out.Spec.Affinity == nil {
		out.Spec.Affinity = &corev1.Affinity{}
	}
	if out.Spec.Affinity.NodeAffinity == nil {
		out.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := out.Spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		terms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range terms {
		terms[i].MatchExpressions = append(terms[i].MatchExpressions, reqs...)
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = terms
	return out
}
