package nodeaffinity

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// nodeTable numbers the label values of one snapshot's nodes, one column
// per label key, so that a compiled selector (compiled.go) answers a node
// with a few slice reads instead of hashing label strings per requirement
// (docs/scheduler.md#node-affinity-by-value-tables). Node labels and names
// are fixed within a snapshot; a new snapshot list gets a new table.
type nodeTable struct {
	// list is the snapshot list the table was built over; keeping it also
	// keeps its array from being reused by a later list.
	list []*framework.NodeInfo
	// nodes[i] is the Node object position i was numbered from; a NodeInfo
	// is answered from the table only when its Index leads to its own Node.
	nodes []*v1.Node
	// byName maps each node's name to its position; usable is false when
	// a name is empty or repeated (then names cannot stand for positions).
	byName map[string]int32
	usable bool
	cols   map[string]*column
}

// column holds one label key's value id per position: 0 when the node
// lacks the key, otherwise 1 + the index of the value in values.
type column struct {
	ids    []int32
	values []string
}

func newNodeTable(list []*framework.NodeInfo) *nodeTable {
	t := &nodeTable{list: list, nodes: make([]*v1.Node, len(list)), byName: make(map[string]int32, len(list)),
		usable: true, cols: map[string]*column{}}
	for i, ni := range list {
		n := ni.Node
		t.nodes[i] = n
		if n == nil || n.Name == "" {
			t.usable = false
			continue
		}
		if _, dup := t.byName[n.Name]; dup {
			t.usable = false
		}
		t.byName[n.Name] = int32(i)
	}
	return t
}

// sameList tells whether list is the one the table was built over.
func (t *nodeTable) sameList(list []*framework.NodeInfo) bool {
	return t != nil && len(t.list) == len(list) && (len(list) == 0 || &t.list[0] == &list[0])
}

// position returns ni's position when the table describes ni's node, or -1.
func (t *nodeTable) position(ni *framework.NodeInfo) int32 {
	i := ni.Index
	if i < 0 || int(i) >= len(t.nodes) || t.nodes[i] != ni.Node || ni.Node == nil {
		return -1
	}
	return i
}

// column returns key's column, building it on first use.
func (t *nodeTable) column(key string) *column {
	if c := t.cols[key]; c != nil {
		return c
	}
	c := &column{ids: make([]int32, len(t.nodes))}
	seen := map[string]int32{}
	for i, n := range t.nodes {
		if n == nil {
			continue
		}
		v, ok := n.Labels[key]
		if !ok {
			continue
		}
		id, found := seen[v]
		if !found {
			c.values = append(c.values, v)
			id = int32(len(c.values))
			seen[v] = id
		}
		c.ids[i] = id
	}
	t.cols[key] = c
	return c
}

// table returns the plugin's table for the handle's current snapshot list.
func (pl *NodeAffinity) table() *nodeTable {
	if pl.handle == nil {
		return nil
	}
	list := pl.handle.Nodes()
	if !pl.tbl.sameList(list) {
		pl.tbl = newNodeTable(list)
	}
	if !pl.tbl.usable {
		return nil
	}
	return pl.tbl
}
