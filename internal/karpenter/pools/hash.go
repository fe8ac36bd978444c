package pools

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"

	corev1 "k8s.io/api/core/v1"

	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
)

// Drift annotations: the NodePool's template hash and its version, which
// Karpenter also writes on every NodeClaim it creates
// (docs/karpenter-disruption.md#drift).
const (
	AnnotationNodePoolHash        = karpv1.Group + "/nodepool-hash"
	AnnotationNodePoolHashVersion = karpv1.Group + "/nodepool-hash-version"
	// NodePoolHashVersion is v1.6's hash version.
	NodePoolHashVersion = "v3"
)

// NodePoolHash hashes the template fields whose change drifts the pool's
// nodes: labels, annotations, taints and startup taints (as sets), the
// node class reference, terminationGracePeriod and expireAfter.
// Requirements are left out (they drift through the labels instead), as
// are everything outside the template (weight, limits, disruption). The
// value is berth's own (FNV-64a over a canonical encoding), not the
// number upstream's hashstructure prints.
func NodePoolHash(np *karpv1.NodePool) string {
	t := np.Spec.Template
	view := struct {
		Labels, Annotations    map[string]string
		Taints, StartupTaints  []string
		NodeClassRef           *karpv1.NodeClassReference
		TerminationGracePeriod *karpv1.Duration
		ExpireAfter            karpv1.NillableDuration
	}{Labels: t.Labels, Annotations: t.Annotations, Taints: taintSet(t.Spec.Taints), StartupTaints: taintSet(t.Spec.StartupTaints),
		NodeClassRef: t.Spec.NodeClassRef, TerminationGracePeriod: t.Spec.TerminationGracePeriod, ExpireAfter: t.Spec.ExpireAfter}
	if len(view.Labels) == 0 {
		view.Labels = nil
	}
	if len(view.Annotations) == 0 {
		view.Annotations = nil
	}
	raw, err := json.Marshal(view) // maps encode with sorted keys
	if err != nil {
		return ""
	}
	h := fnv.New64a()
	_, _ = h.Write(raw)
	return fmt.Sprint(h.Sum64())
}

func taintSet(taints []corev1.Taint) []string {
	if len(taints) == 0 {
		return nil
	}
	out := make([]string, len(taints))
	for i, t := range taints {
		out[i] = t.Key + "=" + t.Value + ":" + string(t.Effect)
	}
	sort.Strings(out)
	return out
}
