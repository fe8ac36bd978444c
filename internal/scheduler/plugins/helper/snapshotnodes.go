package helper

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// SnapshotNodes pins one snapshot's node list and the Node object at each
// position, for plugins that keep per-node data in slices indexed by
// position (docs/scheduler.md#per-snapshot-tables). Node objects
// are fixed within a snapshot, and a new snapshot comes with a new list.
type SnapshotNodes struct {
	// list is kept so that its array cannot be reused by a later list.
	list  []*framework.NodeInfo
	nodes []*v1.Node
}

// NewSnapshotNodes pins list.
func NewSnapshotNodes(list []*framework.NodeInfo) *SnapshotNodes {
	t := &SnapshotNodes{list: list, nodes: make([]*v1.Node, len(list))}
	for i, ni := range list {
		t.nodes[i] = ni.Node
	}
	return t
}

// Same tells whether list is the pinned list (nil t: never).
func (t *SnapshotNodes) Same(list []*framework.NodeInfo) bool {
	return t != nil && len(t.list) == len(list) && (len(list) == 0 || &t.list[0] == &list[0])
}

// Len is the number of positions.
func (t *SnapshotNodes) Len() int { return len(t.nodes) }

// Node is the Node object pinned at position i (nil for a NodeInfo without one).
func (t *SnapshotNodes) Node(i int) *v1.Node { return t.nodes[i] }

// Position returns ni's position when ni's Index hint leads to a position
// pinned with ni's own Node object, or -1: data derived from that Node then
// holds for ni, even for a copy of the listed NodeInfo.
func (t *SnapshotNodes) Position(ni *framework.NodeInfo) int32 {
	i := ni.Index
	if i < 0 || int(i) >= len(t.nodes) || ni.Node == nil || t.nodes[i] != ni.Node {
		return -1
	}
	return i
}
