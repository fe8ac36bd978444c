package podtopologyspread

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// walkIndexed is PreFilter's walk over every node (needed when an inclusion
// policy filters nodes) with the node labels read through the snapshot
// index: which nodes carry every key is a node set, each node's domain a
// value id, and counts are summed per id before they become the state's
// maps. A walk over 5,000 nodes otherwise hashes each node's label map
// several times per cycle. A node's matching pods are read from the
// selections' per-node counts (shapes.go) rather than counted. nodes must
// be the list the index was updated with (pl.mu held); the counts equal
// the plain walk's.
func (pl *Plugin) walkIndexed(s *preFilterState, pod *v1.Pod, nodes []*framework.NodeInfo) {
	x := pl.index
	sels := pl.selectionsLocked()
	picked := make([]*selection, len(s.constraints))
	for i := range s.constraints {
		picked[i] = sels.get(pod.Namespace, s.constraints[i].Selector)
	}
	n := len(nodes)
	holders := helper.NewNodeSet(n)
	for i := range holders {
		holders[i] = ^uint64(0)
	}
	ids := make([][]int32, len(s.constraints))
	sums := make([][]int, len(s.constraints))
	seen := make([][]bool, len(s.constraints))
	for i := range s.constraints {
		key := s.constraints[i].TopologyKey
		set := helper.NewNodeSet(n)
		x.AddKeyHolders(set, key)
		holders.IntersectWith(set)
		var byValue map[string]int32
		ids[i], byValue = x.ValueIDs(key)
		sums[i], seen[i] = make([]int, len(byValue)), make([]bool, len(byValue))
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	included := make([]includer, len(s.constraints))
	for i := range s.constraints {
		included[i] = sels.includer(&s.constraints[i], pod, required, nodes)
	}
	for p, ni := range nodes {
		if ni.Node == nil || !holders.Has(int32(p)) {
			continue
		}
		for i := range s.constraints {
			if !included[i].has(int32(p)) {
				continue
			}
			id := ids[i][p]
			seen[i][id] = true
			if picked[i] != nil {
				sums[i][id] += int(picked[i].perNode[p])
			}
		}
	}
	// The sums by id are the renumbered counts buildFastFilter wants (ids
	// no node took part with count 0) and, with seen, the state's counts
	// (counts.go: no map unless a domain is asked by name); the critical
	// paths are found here, so buildFastFilter need not look every domain
	// up again.
	s.idCounts = make([][]int, len(s.constraints))
	for i := range s.constraints {
		names := x.ValueNames(s.constraints[i].TopologyKey)
		p, n := newCriticalPaths(), 0
		for id, ok := range seen[i] {
			if ok {
				p.offer(n, names[id], sums[i][id])
				n++
			}
		}
		s.tpValueToMatchNum[i] = idCountsOf(names, sums[i], seen[i])
		s.criticalPaths[i], s.idCounts[i] = p, sums[i]
	}
}

// indexedLabels reads the constraints' keys of snapshot nodes through the
// index (node sets and value ids) rather than each node's label map. A nil
// *indexedLabels, or a node outside the snapshot (position -1), reads the
// labels themselves.
type indexedLabels struct {
	pos     map[*framework.NodeInfo]int32
	holders helper.NodeSet
	ids     [][]int32
	names   [][]string
}

func (pl *Plugin) newIndexedLabels(cs []constraint) *indexedLabels {
	x := pl.index
	ix := &indexedLabels{pos: x.Positions(), holders: helper.NewNodeSet(x.NumNodes()),
		ids: make([][]int32, len(cs)), names: make([][]string, len(cs))}
	for i := range ix.holders {
		ix.holders[i] = ^uint64(0)
	}
	for i := range cs {
		ix.holders.IntersectWith(x.KeyHolders(cs[i].TopologyKey))
		ix.ids[i], _ = x.ValueIDs(cs[i].TopologyKey)
		ix.names[i] = x.ValueNames(cs[i].TopologyKey)
	}
	return ix
}

func (ix *indexedLabels) position(ni *framework.NodeInfo) int32 {
	if ix == nil {
		return -1
	}
	if p, ok := ix.pos[ni]; ok {
		return p
	}
	return -1
}

// hasAllKeys is nodeHasAllKeys for the node at position p.
func (ix *indexedLabels) hasAllKeys(p int32, node *v1.Node, cs []constraint) bool {
	if p < 0 {
		return nodeHasAllKeys(node.Labels, cs)
	}
	return ix.holders.Has(p)
}

// value is constraint i's key on the node at position p ("" when missing).
func (ix *indexedLabels) value(p int32, i int, ni *framework.NodeInfo, s *preScoreState) string {
	if p < 0 {
		v, _ := s.label(i, ni)
		return v
	}
	if id := ix.ids[i][p]; id >= 0 {
		return ix.names[i][id]
	}
	return ""
}

// label is constraint i's key on the node at position p, with presence.
func (ix *indexedLabels) label(p int32, i int, ni *framework.NodeInfo, s *preScoreState) (string, bool) {
	if p < 0 {
		return s.label(i, ni)
	}
	if id := ix.ids[i][p]; id >= 0 {
		return ix.names[i][id], true
	}
	return "", false
}
