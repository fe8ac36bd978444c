package nodeaffinity

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Table is a snapshot list's label value table (table.go) for other
// plugins: PodTopologySpread answers nodeAffinityPolicy=Honor with it
// (docs/scheduler.md, "PodTopologySpread selections"). It answers by
// position in the list it was built from.
type Table struct{ t *nodeTable }

// NewTable numbers list's node labels; nil when names cannot stand for
// positions (a nil Node, an empty or repeated name), and then the caller
// keeps the component-helpers matcher.
func NewTable(list []*framework.NodeInfo) *Table {
	t := newNodeTable(list)
	if !t.usable {
		return nil
	}
	return &Table{t: t}
}

// Same reports whether t was built from list.
func (t *Table) Same(list []*framework.NodeInfo) bool { return t.t.snap.Same(list) }

// Required is a pod's nodeSelector and required node affinity compiled
// over a Table: Match(p) gives the component-helpers RequiredNodeAffinity
// verdict for the node at position p, parse errors counting as no match.
// It fills verdict caches as it answers, so one Required is for one
// goroutine at a time.
type Required struct{ c *compiledRequired }

// CompileRequired compiles pod's required node selection; nil when some
// part cannot be represented (the caller keeps the helper's matcher).
func (t *Table) CompileRequired(pod *v1.Pod) *Required {
	c := compileRequired(t.t, pod)
	if c == nil {
		return nil
	}
	return &Required{c: c}
}

// Match reports whether the node at position p passes.
func (r *Required) Match(p int32) bool { return r.c.match(p) }
