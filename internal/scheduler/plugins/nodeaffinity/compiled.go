package nodeaffinity

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// A compiled selector answers the component-helpers matcher's question for
// the nodes of one snapshot table (table.go) by reading value ids
// (docs/scheduler.md#node-affinity-by-value-tables):
//   - a label requirement (or a nodeSelector entry) reads only its own key,
//     so its verdict is a function of the node's value id for that key,
//     filled in lazily per id and shared by every node with that value;
//   - a matchFields requirement reads only metadata.name, which the table
//     maps to a position, so it becomes a position comparison.
// The helper's parse errors are kept: a term it cannot parse never matches.

// oneLabel is a label set holding at most one label, to ask a requirement
// about a single value without building a map.
type oneLabel struct {
	key, value string
	present    bool
}

func (l oneLabel) Has(k string) bool { return l.present && k == l.key }
func (l oneLabel) Get(k string) string {
	v, _ := l.Lookup(k)
	return v
}
func (l oneLabel) Lookup(k string) (string, bool) {
	if l.present && k == l.key {
		return l.value, true
	}
	return "", false
}

// Verdict cache states per value id.
const (
	unknown uint8 = iota
	no
	yes
)

// labelCheck is one requirement on one label key.
type labelCheck struct {
	col *column
	// verdict per value id (0: key absent), filled on first use.
	verdict []uint8
	// req is the parsed requirement; nil for a nodeSelector entry, which
	// asks for the key to be present with value equal.
	req   *labels.Requirement
	key   string
	equal string
}

func newLabelCheck(t *nodeTable, key string) labelCheck {
	col := t.column(key)
	return labelCheck{col: col, verdict: make([]uint8, len(col.values)+1), key: key}
}

func (c *labelCheck) ok(pos int32) bool {
	id := c.col.ids[pos]
	v := c.verdict[id]
	if v == unknown {
		l := oneLabel{key: c.key}
		if id > 0 {
			l.value, l.present = c.col.values[id-1], true
		}
		var match bool
		if c.req == nil {
			match = l.present && l.value == c.equal
		} else {
			match = c.req.Matches(l)
		}
		v = no
		if match {
			v = yes
		}
		c.verdict[id] = v
	}
	return v == yes
}

// fieldCheck is one matchFields requirement: the node's metadata.name
// equal (In) or not equal (NotIn) to a value.
type fieldCheck struct {
	in bool
	// pos is the position of the node the value names (-1: none); for a
	// key other than metadata.name the field reads "" on every node and
	// constant holds the verdict.
	pos      int32
	constant uint8
}

func (f fieldCheck) ok(pos int32) bool {
	if f.constant != unknown {
		return f.constant == yes
	}
	return (pos == f.pos) == f.in
}

// compiledTerm is one non-empty node selector term: its label checks and
// field checks ANDed; never is set when the helper cannot parse it.
type compiledTerm struct {
	never  bool
	labels []labelCheck
	fields []fieldCheck
}

func (c *compiledTerm) ok(pos int32) bool {
	if c.never {
		return false
	}
	for i := range c.labels {
		if !c.labels[i].ok(pos) {
			return false
		}
	}
	for _, f := range c.fields {
		if !f.ok(pos) {
			return false
		}
	}
	return true
}

// labelOperators maps node selector operators onto label selector ones, as
// the helper parses them.
var labelOperators = map[v1.NodeSelectorOperator]selection.Operator{
	v1.NodeSelectorOpIn:           selection.In,
	v1.NodeSelectorOpNotIn:        selection.NotIn,
	v1.NodeSelectorOpExists:       selection.Exists,
	v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	v1.NodeSelectorOpGt:           selection.GreaterThan,
	v1.NodeSelectorOpLt:           selection.LessThan,
}

// compileTerm compiles a non-empty term. It reports false when the term
// cannot be represented, and the caller then keeps the helper's matcher.
func compileTerm(t *nodeTable, term *v1.NodeSelectorTerm) (compiledTerm, bool) {
	// The helper decides what parses; a term it rejects never matches.
	if _, err := nodeaffinity.NewNodeSelector(&v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{*term}}); err != nil {
		return compiledTerm{never: true}, true
	}
	var c compiledTerm
	for _, e := range term.MatchExpressions {
		op, ok := labelOperators[e.Operator]
		if !ok {
			return c, false
		}
		r, err := labels.NewRequirement(e.Key, op, e.Values)
		if err != nil {
			return c, false
		}
		lc := newLabelCheck(t, e.Key)
		lc.req = r
		c.labels = append(c.labels, lc)
	}
	for _, e := range term.MatchFields {
		if len(e.Values) != 1 || (e.Operator != v1.NodeSelectorOpIn && e.Operator != v1.NodeSelectorOpNotIn) {
			return c, false
		}
		f := fieldCheck{in: e.Operator == v1.NodeSelectorOpIn, pos: -1}
		value := e.Values[0]
		if e.Key != metav1.ObjectNameField {
			// Only metadata.name is a node field: any other reads "".
			f.constant = no
			if (value == "") == f.in {
				f.constant = yes
			}
		} else if p, found := t.byName[value]; found {
			f.pos = p
		}
		c.fields = append(c.fields, f)
	}
	return c, true
}

// compiledRequired is a pod's nodeSelector and required node affinity.
type compiledRequired struct {
	selector []labelCheck
	// affinity is set when the pod has required node affinity; then one
	// of terms must match (none: nothing matches).
	affinity bool
	terms    []compiledTerm
}

// compileRequired compiles pod's required selection over t; nil when some
// part cannot be represented.
func compileRequired(t *nodeTable, pod *v1.Pod) *compiledRequired {
	c := &compiledRequired{}
	for k, v := range pod.Spec.NodeSelector {
		lc := newLabelCheck(t, k)
		lc.equal = v
		c.selector = append(c.selector, lc)
	}
	if required := requiredTerms(pod); required != nil {
		c.affinity = true
		for i := range required.NodeSelectorTerms {
			term := &required.NodeSelectorTerms[i]
			if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
				continue // the helper drops empty terms
			}
			ct, ok := compileTerm(t, term)
			if !ok {
				return nil
			}
			c.terms = append(c.terms, ct)
		}
	}
	return c
}

func (c *compiledRequired) match(pos int32) bool {
	for i := range c.selector {
		if !c.selector[i].ok(pos) {
			return false
		}
	}
	if !c.affinity {
		return true
	}
	for i := range c.terms {
		if c.terms[i].ok(pos) {
			return true
		}
	}
	return false
}

// compiledPreferred is a pod's preferred node affinity terms that count
// (non-zero weight, non-empty), all parsable.
type compiledPreferred struct {
	terms   []compiledTerm
	weights []int64
}

func compilePreferred(t *nodeTable, terms []v1.PreferredSchedulingTerm) *compiledPreferred {
	c := &compiledPreferred{}
	for i := range terms {
		term := &terms[i]
		if term.Weight == 0 || (len(term.Preference.MatchExpressions) == 0 && len(term.Preference.MatchFields) == 0) {
			continue
		}
		ct, ok := compileTerm(t, &term.Preference)
		if !ok {
			return nil
		}
		c.terms = append(c.terms, ct)
		c.weights = append(c.weights, int64(term.Weight))
	}
	return c
}

func (c *compiledPreferred) score(pos int32) int64 {
	var s int64
	for i := range c.terms {
		if c.terms[i].ok(pos) {
			s += c.weights[i]
		}
	}
	return s
}
