package generator

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/berth-sim/berth/conformance/scenario"
)

// ForApply readies a scenario to be written as a file a user applies end to
// end (`berth apply -f`, docs/performance.md), so that every pod in it
// survives the controllers and both schedulers see the same pods:
//
//   - Pods lose their ownerReferences. Those name their owners by uid, and
//     the API server gives every created object a new uid, so the garbage
//     collector would delete each pod as the dependent of a missing owner
//     (and its ReplicaSet would create replacements).
//   - Each ReplicaSet asks for the pods it adopts: the ownerless pods of its
//     namespace its selector matches (the first set in file order wins, as
//     only one controller can own a pod), and its status says so. The
//     generator's sets ask for 3 whatever they select, and the controller
//     would delete the excess.
//   - StatefulSets ask for 0: they adopt only pods named <set>-<ordinal>,
//     and no generated pod is, so a set asking for more would create new
//     pods beside the file's.
//
// Pod names, labels and specs are unchanged, and so is every selector, so
// scheduling is the same as for the scenario itself (the default spreading
// selects by the sets' selectors, not by owners or replica counts). The
// scenario is changed in place; the generator's own scenarios never call it,
// so their files and hashes stay as they were.
func ForApply(sc *scenario.Scenario) {
	pods := append(append([]*v1.Pod(nil), sc.Existing...), sc.Pending...)
	for _, p := range pods {
		p.OwnerReferences = nil
	}
	adopted := map[*v1.Pod]bool{}
	for _, rs := range sc.ReplicaSets {
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil {
			sel = labels.Nothing()
		}
		n := int32(0)
		for _, p := range pods {
			if p.Namespace == rs.Namespace && !adopted[p] && sel.Matches(labels.Set(p.Labels)) {
				adopted[p] = true
				n++
			}
		}
		rs.Spec.Replicas = ptr.To(n)
		rs.Status = appsv1.ReplicaSetStatus{Replicas: n, FullyLabeledReplicas: n}
	}
	for _, set := range sc.StatefulSets {
		set.Spec.Replicas = ptr.To[int32](0)
		set.Status = appsv1.StatefulSetStatus{}
	}
}
