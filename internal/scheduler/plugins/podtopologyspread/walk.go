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
// several times per cycle. nodes must be the list the index was updated
// with; the counts equal the plain walk's.
func (pl *Plugin) walkIndexed(s *preFilterState, pod *v1.Pod, nodes []*framework.NodeInfo, counter *counter) {
	x := pl.index
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
	for p, ni := range nodes {
		if ni.Node == nil || !holders.Has(int32(p)) {
			continue
		}
		for i := range s.constraints {
			c := &s.constraints[i]
			if !c.matchNodeInclusionPolicies(pod, ni.Node, required) {
				continue
			}
			id := ids[i][p]
			seen[i][id] = true
			sums[i][id] += counter.count(i, ni)
		}
	}
	for i := range s.constraints {
		names := x.ValueNames(s.constraints[i].TopologyKey)
		m := s.tpValueToMatchNum[i]
		for id, ok := range seen[i] {
			if ok {
				m[names[id]] += sums[i][id]
			}
		}
	}
}
