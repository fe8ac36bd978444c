package nodeaffinity

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// nodeTable numbers the label values of one snapshot's nodes, one column
// per label key, so that a compiled selector (compiled.go) answers a node
// with a few slice reads instead of hashing label strings per requirement
// (docs/scheduler.md#node-affinity-by-value-tables). Node labels and names
// are fixed within a snapshot; a new snapshot list gets a new table.
type nodeTable struct {
	// snap pins the snapshot list; a NodeInfo is answered from the table
	// only when its Index leads to its own Node object.
	snap *helper.SnapshotNodes
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
	t := &nodeTable{snap: helper.NewSnapshotNodes(list), byName: make(map[string]int32, len(list)),
		usable: true, cols: map[string]*column{}}
	for i, ni := range list {
		n := ni.Node
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

// position returns ni's position when the table describes ni's node, or -1.
func (t *nodeTable) position(ni *framework.NodeInfo) int32 { return t.snap.Position(ni) }

// column returns key's column, building it on first use.
func (t *nodeTable) column(key string) *column {
	if c := t.cols[key]; c != nil {
		return c
	}
	c := &column{ids: make([]int32, t.snap.Len())}
	seen := map[string]int32{}
	for i := range c.ids {
		n := t.snap.Node(i)
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
	if pl.tbl == nil || !pl.tbl.snap.Same(list) {
		pl.tbl = newNodeTable(list)
	}
	if !pl.tbl.usable {
		return nil
	}
	return pl.tbl
}
