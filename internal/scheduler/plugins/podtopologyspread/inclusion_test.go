package podtopologyspread

import (
	"fmt"
	"math/rand"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// randomRequiredAffinity gives pod a nodeSelector and required node
// affinity drawn over randomCluster's labels and names, with the shapes the
// component-helpers parser treats specially (unknown operators, invalid
// keys and values, non-integer Gt/Lt, matchFields on other keys or with
// several values, empty terms, no terms), so that TestIncluderMatchesPolicies
// checks the compiled matcher the includer takes against the helper's.
func randomRequiredAffinity(r *rand.Rand, pod *v1.Pod) {
	keys := []string{pt.ZoneLabel, "rack", v1.LabelHostname, "bad key!"}
	ops := []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
		v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt, "Bogus"}
	value := func() string {
		switch r.Intn(10) {
		case 0:
			return ""
		case 1:
			return "-bad-"
		case 2:
			return fmt.Sprint(r.Intn(3))
		case 3:
			return fmt.Sprintf("n%02d", r.Intn(36))
		}
		return []string{"z0", "z1", "z2", "r0", "r1", "r2", "r3"}[r.Intn(7)]
	}
	if r.Intn(3) == 0 {
		pod.Spec.NodeSelector = map[string]string{}
		for i := r.Intn(2); i >= 0; i-- {
			pod.Spec.NodeSelector[keys[r.Intn(3)]] = value()
		}
	} else if r.Intn(2) == 0 {
		pod.Spec.NodeSelector = nil
	}
	sel := &v1.NodeSelector{}
	for i := r.Intn(4); i > 0; i-- {
		var term v1.NodeSelectorTerm
		for j := r.Intn(3); j > 0; j-- {
			req := v1.NodeSelectorRequirement{Key: keys[r.Intn(len(keys))], Operator: ops[r.Intn(len(ops))]}
			for k := r.Intn(3); k > 0; k-- {
				req.Values = append(req.Values, value())
			}
			term.MatchExpressions = append(term.MatchExpressions, req)
		}
		for j := r.Intn(3) - 1; j > 0; j-- {
			key := []string{metav1.ObjectNameField, metav1.ObjectNameField, "metadata.namespace"}[r.Intn(3)]
			op := []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists}[r.Intn(3)]
			req := v1.NodeSelectorRequirement{Key: key, Operator: op}
			for k := r.Intn(3); k > 0; k-- {
				req.Values = append(req.Values, value())
			}
			term.MatchFields = append(term.MatchFields, req)
		}
		sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, term)
	}
	if r.Intn(5) == 0 {
		sel = nil
	}
	pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}
}
