package helper

import "github.com/berth-sim/berth/internal/scheduler/framework"

type labelValue struct {
	value string
	ok    bool
}

// LabelColumn is one label key's value on every node of a snapshot. One
// pointer-keyed table is several times cheaper to read than each node's own
// label map, which matters when a cycle reads the key on thousands of nodes.
// It is never modified once built, so a cycle state may keep it.
type LabelColumn struct {
	key    string
	values map[*framework.NodeInfo]labelValue
}

// Get is ni.Node.Labels[key] with its presence. Nodes the column was not
// built over (such as copies made for preemption) are read directly.
func (c *LabelColumn) Get(ni *framework.NodeInfo) (string, bool) {
	if e, found := c.values[ni]; found {
		return e.value, e.ok
	}
	v, ok := ni.Node.Labels[c.key]
	return v, ok
}

// Column returns key's column over the indexed nodes, building it on first
// use in the snapshot (node labels are fixed within one). Call it only after
// Update in the same cycle.
func (x *ClassDomainIndex) Column(key string) *LabelColumn {
	if c := x.columns[key]; c != nil {
		return c
	}
	c := &LabelColumn{key: key, values: make(map[*framework.NodeInfo]labelValue, len(x.nodes))}
	for _, ni := range x.nodes {
		if ni.Node == nil {
			continue
		}
		v, ok := ni.Node.Labels[key]
		c.values[ni] = labelValue{value: v, ok: ok}
	}
	if x.columns == nil {
		x.columns = map[string]*LabelColumn{}
	}
	x.columns[key] = c
	return c
}
