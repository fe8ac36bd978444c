package scheduling

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Requirements maps a label key to its requirement. A map, so pass it by
// value.
type Requirements map[string]*Requirement

// NewRequirements builds a set, intersecting requirements that share a key.
func NewRequirements(requirements ...*Requirement) Requirements {
	r := make(Requirements, len(requirements))
	r.Add(requirements...)
	return r
}

// NewNodeSelectorRequirements builds a set from node selector requirements.
func NewNodeSelectorRequirements(requirements ...corev1.NodeSelectorRequirement) Requirements {
	r := make(Requirements, len(requirements))
	for _, req := range requirements {
		r.Add(NewRequirement(req.Key, req.Operator, req.Values...))
	}
	return r
}

// NewNodeSelectorRequirementsWithMinValues builds a set from NodePool/NodeClaim requirements.
func NewNodeSelectorRequirementsWithMinValues(requirements ...NodeSelectorRequirementWithMinValues) Requirements {
	r := make(Requirements, len(requirements))
	for _, req := range requirements {
		r.Add(NewRequirementWithFlexibility(req.Key, req.Operator, req.MinValues, req.Values...))
	}
	return r
}

// NewLabelRequirements turns labels into In [value] requirements.
func NewLabelRequirements(labels map[string]string) Requirements {
	r := make(Requirements, len(labels))
	for key, value := range labels {
		r.Add(NewRequirement(key, corev1.NodeSelectorOpIn, value))
	}
	return r
}

// NewPodRequirements is what the provisioner schedules a pod with: its
// nodeSelector, its heaviest preferred node-affinity term treated as
// required, and the first required term. Relaxation drops terms later.
// docs/karpenter-requirements.md#pod-requirements
func NewPodRequirements(pod *corev1.Pod) Requirements {
	return newPodRequirements(pod, true)
}

// NewStrictPodRequirements is NewPodRequirements without the preferred term.
func NewStrictPodRequirements(pod *corev1.Pod) Requirements {
	return newPodRequirements(pod, false)
}

func newPodRequirements(pod *corev1.Pod, preferred bool) Requirements {
	r := NewLabelRequirements(pod.Spec.NodeSelector)
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil {
		return r
	}
	na := pod.Spec.Affinity.NodeAffinity
	if term := HeaviestPreferredTerm(na.PreferredDuringSchedulingIgnoredDuringExecution); preferred && term != nil {
		for _, req := range term.Preference.MatchExpressions {
			r.Add(NewRequirement(req.Key, req.Operator, req.Values...))
		}
	}
	if na.RequiredDuringSchedulingIgnoredDuringExecution != nil && len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) > 0 {
		for _, req := range na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions {
			r.Add(NewRequirement(req.Key, req.Operator, req.Values...))
		}
	}
	return r
}

// HeaviestPreferredTerm returns the term of largest weight, the first such
// on ties (upstream sorts the pod's slice by weight, descending, in place;
// for up to 12 terms that sort keeps tied terms in order, so the first
// wins). Unlike upstream, the pod is not modified. nil when there are none.
func HeaviestPreferredTerm(terms []corev1.PreferredSchedulingTerm) *corev1.PreferredSchedulingTerm {
	var best *corev1.PreferredSchedulingTerm
	for i := range terms {
		if best == nil || terms[i].Weight > best.Weight {
			best = &terms[i]
		}
	}
	return best
}

// HasPreferredNodeAffinity reports whether the pod has a preferred node-affinity term.
func HasPreferredNodeAffinity(p *corev1.Pod) bool {
	return p != nil && p.Spec.Affinity != nil && p.Spec.Affinity.NodeAffinity != nil &&
		len(p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
}

// Add intersects each requirement into the set (mutating it).
func (r Requirements) Add(requirements ...*Requirement) {
	for _, req := range requirements {
		if existing, ok := r[req.Key]; ok {
			req = req.Intersection(existing)
		}
		r[req.Key] = req
	}
}

// Keys returns the set of keys.
func (r Requirements) Keys() sets.Set[string] {
	keys := make(sets.Set[string], len(r))
	for key := range r {
		keys[key] = sets.Empty{}
	}
	return keys
}

// SortedKeys returns the keys in order, for deterministic walks.
func (r Requirements) SortedKeys() []string {
	keys := make([]string, 0, len(r))
	for key := range r {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// Values returns the requirements ordered by key.
func (r Requirements) Values() []*Requirement {
	out := make([]*Requirement, 0, len(r))
	for _, key := range r.SortedKeys() {
		out = append(out, r[key])
	}
	return out
}

// Has reports whether key is constrained.
func (r Requirements) Has(key string) bool {
	_, ok := r[key]
	return ok
}

// Get returns key's requirement, or Exists for an undefined key.
func (r Requirements) Get(key string) *Requirement {
	if req, ok := r[key]; ok {
		return req
	}
	return NewRequirement(key, corev1.NodeSelectorOpExists)
}

// NodeSelectorRequirements converts to API form, ordered by key.
func (r Requirements) NodeSelectorRequirements() []NodeSelectorRequirementWithMinValues {
	out := make([]NodeSelectorRequirementWithMinValues, 0, len(r))
	for _, req := range r.Values() {
		out = append(out, req.NodeSelectorRequirement())
	}
	return out
}

// CompatibilityOption tunes Compatible. A value (not a closure) so passing
// options does not allocate on the hot path.
type CompatibilityOption struct {
	// AllowUndefined keys may be absent from the receiver.
	AllowUndefined sets.Set[string]
}

// AllowUndefinedWellKnownLabels lets the receiver leave the vocabulary's
// well-known keys undefined (their values come from instance types).
func AllowUndefinedWellKnownLabels(v *Vocabulary) CompatibilityOption {
	return CompatibilityOption{AllowUndefined: v.WellKnownLabels}
}

// IsCompatible is Compatible == nil.
func (r Requirements) IsCompatible(other Requirements, options ...CompatibilityOption) bool {
	return r.Compatible(other, options...) == nil
}

// Compatible checks that other (usually a pod's) can be met by r (a NodePool,
// NodeClaim or node): a key of other that is not allowed undefined must be
// defined in r unless other's operator is NotIn or DoesNotExist; then every
// shared key must intersect. Upstream reports whichever undefined key its
// map walk meets first; berth reports the smallest.
// docs/karpenter-requirements.md#compatible
func (r Requirements) Compatible(other Requirements, options ...CompatibilityOption) error {
	var allow sets.Set[string]
	for _, o := range options {
		allow = o.AllowUndefined
	}
	bad, found := "", false
	for key, req := range other {
		if allow.Has(key) || r.Has(key) {
			continue
		}
		if op := req.Operator(); op == corev1.NodeSelectorOpNotIn || op == corev1.NodeSelectorOpDoesNotExist {
			continue
		}
		if !found || key < bad {
			bad, found = key, true
		}
	}
	if found {
		return fmt.Errorf("label %q does not have known values%s", bad, labelHint(r, bad, allow))
	}
	return r.Intersects(other)
}

// labelHint suggests a key the user may have meant: a well-known (allowed)
// key containing key or sharing its name part, else such a key of r.
// Sorted walks make the hint deterministic (upstream's is map order).
func labelHint(r Requirements, key string, allowed sets.Set[string]) string {
	_, name, ok := strings.Cut(key, "/")
	if !ok {
		name = key
	}
	for _, candidates := range [][]string{sets.List(allowed), r.SortedKeys()} {
		for _, c := range candidates {
			if strings.Contains(c, key) || strings.HasSuffix(c, name) {
				return fmt.Sprintf(" (typo of %q?)", c)
			}
		}
	}
	return ""
}

// Intersects checks every key both sets define has a common value; a pair
// of negative requirements (NotIn/DoesNotExist) always passes. Undefined
// keys pass. All failures are reported, ordered by key.
// docs/karpenter-requirements.md#intersects
func (r Requirements) Intersects(other Requirements) error {
	// Walk the smaller map and look each key up once in the larger.
	small, large, swapped := r, other, false
	if len(small) > len(large) {
		small, large, swapped = large, small, true
	}
	var errs []error
	for key, existing := range small {
		incoming, ok := large[key]
		if !ok {
			continue
		}
		if swapped {
			existing, incoming = incoming, existing
		}
		if existing.HasIntersection(incoming) || (isNegative(incoming) && isNegative(existing)) {
			continue
		}
		errs = append(errs, badKeyError{key: key, incoming: incoming, existing: existing})
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.(badKeyError).key, b.(badKeyError).key) })
	return joinedError(errs)
}

func isNegative(r *Requirement) bool {
	op := r.Operator()
	return op == corev1.NodeSelectorOpNotIn || op == corev1.NodeSelectorOpDoesNotExist
}

// badKeyError renders lazily: callers mostly want to know that, not why.
type badKeyError struct {
	key                string
	incoming, existing *Requirement
}

func (e badKeyError) Error() string {
	return fmt.Sprintf("key %s, %s not in %s", e.key, e.incoming, e.existing)
}

// joinedError joins several errors with "; ", as upstream's multierr does.
type joinedError []error

func (e joinedError) Error() string {
	parts := make([]string, len(e))
	for i, err := range e {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (e joinedError) Unwrap() []error { return e }

// Labels are the node labels a NodeClaim built from r gets from its
// requirements: one value (Any) for every key Karpenter may write itself,
// i.e. not well-known (the cloud provider supplies those) and not in a
// restricted domain. Keys are walked in order so rng draws are reproducible.
// docs/karpenter-requirements.md#labels
func (r Requirements) Labels(v *Vocabulary, rng *rand.Rand) map[string]string {
	labels := map[string]string{}
	for _, key := range r.SortedKeys() {
		if v.IsRestrictedNodeLabel(key) {
			continue
		}
		if value := r[key].Any(rng); value != "" {
			labels[key] = value
		}
	}
	return labels
}

// HasMinValues reports whether any requirement carries minValues.
func (r Requirements) HasMinValues() bool {
	for _, req := range r {
		if req.MinValues != nil {
			return true
		}
	}
	return false
}

// String lists the requirements sorted, leaving out restricted labels
// (the hostname placeholder), joined by ", ".
func (r Requirements) String() string {
	parts := make([]string, 0, len(r))
	for _, req := range r {
		if !RestrictedLabels.Has(req.Key) {
			parts = append(parts, req.String())
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// DeepCopy returns an independent copy.
func (r Requirements) DeepCopy() Requirements {
	out := make(Requirements, len(r))
	for key, req := range r {
		out[key] = req.DeepCopy()
	}
	return out
}
