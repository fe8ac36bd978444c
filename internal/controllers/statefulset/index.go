package statefulset

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
)

// podIndex is built in one walk over the pods per pass and serves every set
// of that pass (docs/simulation-speed.md#workload-controllers-pod-index-session-22):
// pod keys by controller UID, and orphan keys by namespace and by the name
// their ordinal suffix follows ("<set>-<n>"), the only orphans a set may
// adopt. Entries are keys, not pods: a reader looks each up and re-checks
// namespace and controller, so keys of pods deleted or re-owned since the
// walk are harmless. Keys are only missing for pods that changed hands or
// appeared after the walk: this controller's own creations are added (add),
// and any adoption or release makes the next reader walk again (dirty).
type podIndex struct {
	s       *cluster.State
	dirty   bool
	byOwner map[types.UID][]string
	orphans map[orphanKey][]string
}

type orphanKey struct{ namespace, prefix string }

func newPodIndex(s *cluster.State) *podIndex { return &podIndex{s: s, dirty: true} }

func (ix *podIndex) ensure() {
	if !ix.dirty {
		return
	}
	ix.byOwner = map[types.UID][]string{}
	ix.orphans = map[orphanKey][]string{}
	for k, p := range ix.s.Pods {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
			ix.byOwner[ref.UID] = append(ix.byOwner[ref.UID], k)
		} else if prefix, ok := ordinalPrefix(p.Name); ok {
			ok := orphanKey{p.Namespace, prefix}
			ix.orphans[ok] = append(ix.orphans[ok], k)
		}
	}
	ix.dirty = false
}

// ordinalPrefix is the "<set>" of a name "<set>-<digits>", the part the
// ordinalName pattern captures; ok is false when the name has no such
// suffix (then ordinalOf is -1 for every set).
func ordinalPrefix(name string) (string, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return "", false
	}
	for j := i + 1; j < len(name); j++ {
		if name[j] < '0' || name[j] > '9' {
			return "", false
		}
	}
	return name[:i], true
}

// claimKeys are the candidates of the set's ClaimPods: its own pods and the
// orphans named after it.
func (ix *podIndex) claimKeys(set *appsv1.StatefulSet) []string {
	ix.ensure()
	own := ix.byOwner[set.UID]
	orphans := ix.orphans[orphanKey{set.Namespace, set.Name}]
	return append(append(make([]string, 0, len(own)+len(orphans)), own...), orphans...)
}

// claimed notes that ClaimPods adopted or released pods.
func (ix *podIndex) claimed(changed bool) {
	if changed {
		ix.dirty = true
	}
}

// add records a pod key this controller just created for set.
func (ix *podIndex) add(set *appsv1.StatefulSet, key string) {
	if !ix.dirty {
		ix.byOwner[set.UID] = append(ix.byOwner[set.UID], key)
	}
}

// owned returns the pods set controls in its namespace, in key order: what
// the walk over every pod in SortedKeys order keeps.
func (ix *podIndex) owned(set *appsv1.StatefulSet) []*corev1.Pod {
	ix.ensure()
	keys := ix.byOwner[set.UID]
	slices.Sort(keys)
	keys = slices.Compact(keys)
	ix.byOwner[set.UID] = keys
	out := make([]*corev1.Pod, 0, len(keys))
	for _, k := range keys {
		p, ok := ix.s.Pods[k]
		if ok && p.Namespace == set.Namespace && controllerutil.IsControlledBy(p, string(set.UID)) {
			out = append(out, p)
		}
	}
	return out
}
