package provisioning

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// The checks below answer Intersects(...) == nil and Compatible(...) == nil
// without wording the error: scheduling's versions collect one error per
// conflicting key, which the instance-type filter and the quick check
// throw away for most of the types and claims they try.

// intersectsOK is a.Intersects(b) == nil: every key both define has a
// common value, or both sides are negative (NotIn/DoesNotExist).
func intersectsOK(a, b scheduling.Requirements) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	for key, ra := range a {
		rb, ok := b[key]
		if !ok {
			continue
		}
		if !ra.HasIntersection(rb) && !(negative(ra) && negative(rb)) {
			return false
		}
	}
	return true
}

// compatibleOK is r.Compatible(other, opt) == nil: every key of other is
// defined by r, allowed undefined, or negative; then the sets intersect.
//
// One walk over other answers both halves: the keys both sides define are
// exactly other's keys that r has. A pod usually brings no requirement or
// one or two, so this is a lookup or two rather than two map walks.
func compatibleOK(r, other scheduling.Requirements, opt scheduling.CompatibilityOption) bool {
	for key, req := range other {
		rr, ok := r[key]
		if !ok {
			if opt.AllowUndefined.Has(key) || negative(req) {
				continue
			}
			return false
		}
		if !rr.HasIntersection(req) && !(negative(rr) && negative(req)) {
			return false
		}
	}
	return true
}

func negative(r *scheduling.Requirement) bool {
	op := r.Operator()
	return op == corev1.NodeSelectorOpNotIn || op == corev1.NodeSelectorOpDoesNotExist
}
