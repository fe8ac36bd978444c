// Package scheduling is Karpenter's requirements algebra: label requirements
// of pods, NodePools, NodeClaims and instance types, their intersection and
// the compatibility checks the provisioner and disruption controllers use.
//
// The rules are described in docs/karpenter-requirements.md; the target is the
// "classic" v1 line of sigs.k8s.io/karpenter (v1.3–v1.6), which stores Gt/Lt
// as strict bounds.
package scheduling

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Requirement is one key's constraint: a value set (or its complement) plus
// optional strict integer bounds and an optional minValues.
// docs/karpenter-requirements.md#the-algebra
type Requirement struct {
	Key        string
	complement bool
	values     sets.Set[string]
	// greaterThan/lessThan are strict bounds, stored as the operator gives
	// them (Gt 4 keeps 4); has* say whether they are set. Plain ints rather
	// than pointers keep HasIntersection free of indirections.
	greaterThan, lessThan int
	hasGT, hasLT          bool
	MinValues             *int
}

// NewRequirement builds a requirement from a node selector operator.
func NewRequirement(key string, operator corev1.NodeSelectorOperator, values ...string) *Requirement {
	return NewRequirementWithFlexibility(key, operator, nil, values...)
}

// NewRequirementWithFlexibility builds a requirement with a minValues.
// Aliased keys are normalised first. Gt/Lt take the first value as an integer;
// upstream relies on prior validation, so a bad or missing value reads as 0.
// docs/karpenter-requirements.md#operators
func NewRequirementWithFlexibility(key string, operator corev1.NodeSelectorOperator, minValues *int, values ...string) *Requirement {
	if normalized, ok := NormalizedLabels[key]; ok {
		key = normalized
	}
	r := &Requirement{Key: key, MinValues: minValues}
	switch operator {
	case corev1.NodeSelectorOpIn:
		r.values = make(sets.Set[string], len(values))
		for _, v := range values {
			r.values[v] = sets.Empty{}
		}
		return r
	case corev1.NodeSelectorOpDoesNotExist:
		r.values = sets.Set[string]{}
		return r
	}
	// Every other operator (including unknown ones, as upstream) is a complement.
	r.complement = true
	r.values = sets.Set[string]{}
	switch operator {
	case corev1.NodeSelectorOpNotIn:
		r.values.Insert(values...)
	case corev1.NodeSelectorOpGt:
		r.greaterThan, r.hasGT = firstInt(values), true
	case corev1.NodeSelectorOpLt:
		r.lessThan, r.hasLT = firstInt(values), true
	}
	return r
}

func firstInt(values []string) int {
	if len(values) == 0 {
		return 0
	}
	v, _ := strconv.Atoi(values[0])
	return v
}

// GreaterThan returns the strict lower bound, if any.
func (r *Requirement) GreaterThan() (int, bool) { return r.greaterThan, r.hasGT }

// LessThan returns the strict upper bound, if any.
func (r *Requirement) LessThan() (int, bool) { return r.lessThan, r.hasLT }

// Complement reports whether the value set lists excluded values.
func (r *Requirement) Complement() bool { return r.complement }

// bounds of the intersection of r and o: the larger lower and smaller upper
// bound; ok is false when no integer lies strictly between them
// (upstream's test is gt >= lt, so Gt 1 ∩ Lt 2 still counts as non-empty).
func (r *Requirement) bounds(o *Requirement) (gt, lt int, hasGT, hasLT, ok bool) {
	gt, hasGT = r.greaterThan, r.hasGT
	if o.hasGT && (!hasGT || o.greaterThan > gt) {
		gt, hasGT = o.greaterThan, true
	}
	lt, hasLT = r.lessThan, r.hasLT
	if o.hasLT && (!hasLT || o.lessThan < lt) {
		lt, hasLT = o.lessThan, true
	}
	ok = !(hasGT && hasLT && gt >= lt)
	return
}

// Intersection returns a new requirement allowing what both allow.
// docs/karpenter-requirements.md#intersection
func (r *Requirement) Intersection(o *Requirement) *Requirement {
	minValues := maxIntPtr(r.MinValues, o.MinValues)
	gt, lt, hasGT, hasLT, ok := r.bounds(o)
	if !ok {
		return NewRequirementWithFlexibility(r.Key, corev1.NodeSelectorOpDoesNotExist, minValues)
	}
	complement := r.complement && o.complement
	var values sets.Set[string]
	switch {
	case r.complement && o.complement:
		values = r.values.Union(o.values)
	case r.complement:
		values = o.values.Difference(r.values)
	case o.complement:
		values = r.values.Difference(o.values)
	default:
		values = r.values.Intersection(o.values)
	}
	for v := range values {
		if !withinBounds(v, gt, lt, hasGT, hasLT) {
			delete(values, v)
		}
	}
	out := &Requirement{Key: r.Key, complement: complement, values: values, MinValues: minValues}
	// A concrete set already had its values filtered, so it drops the bounds.
	if complement {
		out.greaterThan, out.lessThan, out.hasGT, out.hasLT = gt, lt, hasGT, hasLT
	}
	return out
}

// HasIntersection reports whether Intersection would allow some value,
// without building it (the hot path of Compatible and Intersects).
func (r *Requirement) HasIntersection(o *Requirement) bool {
	gt, lt, hasGT, hasLT, ok := r.bounds(o)
	if !ok {
		return false
	}
	switch {
	case r.complement && o.complement:
		return true
	case r.complement:
		return anyAllowed(o.values, r.values, false, gt, lt, hasGT, hasLT)
	case o.complement:
		return anyAllowed(r.values, o.values, false, gt, lt, hasGT, hasLT)
	}
	small, large := r.values, o.values
	if len(small) > len(large) {
		small, large = large, small
	}
	return anyAllowed(small, large, true, gt, lt, hasGT, hasLT)
}

// anyAllowed reports whether some v in candidates has other.Has(v) == want and lies within the bounds.
func anyAllowed(candidates, other sets.Set[string], want bool, gt, lt int, hasGT, hasLT bool) bool {
	for v := range candidates {
		if other.Has(v) == want && withinBounds(v, gt, lt, hasGT, hasLT) {
			return true
		}
	}
	return false
}

// Has reports whether the requirement allows value.
func (r *Requirement) Has(value string) bool {
	return r.values.Has(value) != r.complement && withinBounds(value, r.greaterThan, r.lessThan, r.hasGT, r.hasLT)
}

// Any picks one allowed value, as Karpenter does when it must write a
// concrete label: a member of an In set, or a random integer within the
// bounds for NotIn/Exists. rng makes the draw reproducible; with a nil rng
// the smallest candidate is returned. DoesNotExist gives "".
// docs/karpenter-requirements.md#any
func (r *Requirement) Any(rng *rand.Rand) string {
	switch r.Operator() {
	case corev1.NodeSelectorOpIn:
		values := r.Values()
		if rng == nil {
			return values[0]
		}
		return values[rng.IntN(len(values))]
	case corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists:
		lo, hi := int64(0), int64(math.MaxInt64) // half-open [lo, hi)
		if r.hasGT {
			if r.greaterThan == math.MaxInt {
				return ""
			}
			lo = int64(r.greaterThan) + 1
		}
		if r.hasLT {
			hi = int64(r.lessThan)
		}
		if hi <= lo {
			return ""
		}
		return r.drawInt(rng, lo, hi)
	}
	return ""
}

// drawInt draws from [lo, hi), skipping excluded values (upstream does not
// skip them; hitting one there is a one-in-2^63 event, so this only removes
// an impossible-in-practice wrong answer).
func (r *Requirement) drawInt(rng *rand.Rand, lo, hi int64) string {
	span := uint64(hi) - uint64(lo)
	for tries := 0; tries < 64; tries++ {
		var v int64
		if rng == nil {
			v = lo + int64(tries)
		} else {
			v = int64(uint64(lo) + rng.Uint64N(span))
		}
		if v >= hi {
			break
		}
		if s := strconv.FormatInt(v, 10); !r.values.Has(s) {
			return s
		}
	}
	return ""
}

// Values returns the listed values, sorted (upstream returns them unsorted;
// berth sorts so every caller is deterministic).
func (r *Requirement) Values() []string {
	return sets.List(r.values)
}

// Insert adds values to the listed set (excluded ones for a complement).
func (r *Requirement) Insert(items ...string) {
	r.values.Insert(items...)
}

// Operator is the node selector operator the requirement behaves as. Gt and
// Lt read as Exists (bounds are shown separately by String).
func (r *Requirement) Operator() corev1.NodeSelectorOperator {
	switch {
	case r.complement && len(r.values) > 0:
		return corev1.NodeSelectorOpNotIn
	case r.complement:
		return corev1.NodeSelectorOpExists
	case len(r.values) > 0:
		return corev1.NodeSelectorOpIn
	}
	return corev1.NodeSelectorOpDoesNotExist
}

// Len is the number of allowed values; a complement counts as
// math.MaxInt64 minus its exclusions (bounds are ignored, as upstream).
func (r *Requirement) Len() int {
	if r.complement {
		return math.MaxInt64 - len(r.values)
	}
	return len(r.values)
}

// String renders the requirement the way upstream's error messages do,
// e.g. "key In [a b]", "key Exists >4 <9", "key NotIn [a] minValues 2".
// docs/karpenter-requirements.md#error-texts
func (r *Requirement) String() string {
	var s string
	switch op := r.Operator(); op {
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		s = fmt.Sprintf("%s %s", r.Key, op)
	default:
		values := r.Values()
		if n := len(values); n > 5 {
			values = append(values[:5], fmt.Sprintf("and %d others", n-5))
		}
		s = fmt.Sprintf("%s %s %s", r.Key, op, values)
	}
	if r.hasGT {
		s += fmt.Sprintf(" >%d", r.greaterThan)
	}
	if r.hasLT {
		s += fmt.Sprintf(" <%d", r.lessThan)
	}
	if r.MinValues != nil {
		s += fmt.Sprintf(" minValues %d", *r.MinValues)
	}
	return s
}

// NodeSelectorRequirement converts back to the API form. Like upstream v1.6,
// one requirement per key: a Gt bound wins over an Lt bound, so a key with
// both is written lossily (later upstream versions write two requirements).
func (r *Requirement) NodeSelectorRequirement() NodeSelectorRequirementWithMinValues {
	out := NodeSelectorRequirementWithMinValues{MinValues: r.MinValues}
	out.Key = r.Key
	switch {
	case r.hasGT:
		out.Operator, out.Values = corev1.NodeSelectorOpGt, []string{strconv.Itoa(r.greaterThan)}
	case r.hasLT:
		out.Operator, out.Values = corev1.NodeSelectorOpLt, []string{strconv.Itoa(r.lessThan)}
	default:
		out.Operator = r.Operator()
		if len(r.values) > 0 {
			out.Values = r.Values()
		}
	}
	return out
}

// DeepCopy returns an independent copy.
func (r *Requirement) DeepCopy() *Requirement {
	if r == nil {
		return nil
	}
	out := *r
	out.values = r.values.Clone()
	if r.MinValues != nil {
		mv := *r.MinValues
		out.MinValues = &mv
	}
	return &out
}

// NodeSelectorRequirementWithMinValues is the NodePool/NodeClaim requirement
// form: a node selector requirement plus an optional minValues.
type NodeSelectorRequirementWithMinValues struct {
	corev1.NodeSelectorRequirement `json:",inline"`
	MinValues                      *int `json:"minValues,omitempty"`
}

// withinBounds: with no bounds anything passes; with bounds only integers
// strictly between them do.
func withinBounds(value string, gt, lt int, hasGT, hasLT bool) bool {
	if !hasGT && !hasLT {
		return true
	}
	v, err := strconv.Atoi(value)
	if err != nil {
		return false
	}
	return (!hasGT || v > gt) && (!hasLT || v < lt)
}

func maxIntPtr(a, b *int) *int {
	if a == nil {
		return b
	}
	if b == nil || *a >= *b {
		return a
	}
	return b
}
