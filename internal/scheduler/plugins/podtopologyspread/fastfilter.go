package podtopologyspread

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// fastFilter holds PreFilter's domain counts renumbered by the snapshot
// index's value ids, so that Filter on a snapshot node reads a position and
// two slices per constraint instead of the node's label map and a
// string-keyed count map. It is dropped when the counts change (AddPod,
// RemovePod, Clone); nodes outside the snapshot take the map path.
type fastFilter struct {
	pos map[*framework.NodeInfo]int32
	// ids[i][position] is the node's value id for constraint i's key (-1:
	// the node lacks it); counts[i][id] the domain's matching pods.
	ids    [][]int32
	counts [][]int
}

// buildFastFilter renumbers s's counts and sets s's critical paths in the
// same pass over each constraint's domains (docs/scheduler.md, "PodTopologySpread
// Filter by position"): with a hostname key the map holds one domain per
// node, and the pass that finds the two smallest domains is needed anyway,
// so renumbering adds one id lookup per domain while Filter saves two
// string lookups on every node it visits. nodes must be the list the index
// was updated with; it returns nil (and sets no critical paths) otherwise.
func (pl *Plugin) buildFastFilter(s *preFilterState, nodes []*framework.NodeInfo) *fastFilter {
	x := pl.index
	if x.NumNodes() != len(nodes) {
		return nil
	}
	f := &fastFilter{pos: x.Positions(), ids: make([][]int32, len(s.constraints)), counts: make([][]int, len(s.constraints))}
	for i := range s.constraints {
		ids, _ := x.ValueIDs(s.constraints[i].TopologyKey)
		if s.idCounts != nil && s.idCounts[i] != nil {
			// Counted by id already, critical paths set (walk.go, countFromIndex).
			f.ids[i], f.counts[i] = ids, s.idCounts[i]
			continue
		}
		names := x.ValueNames(s.constraints[i].TopologyKey)
		counts := make([]int, len(names))
		s.criticalPaths[i] = pathsByID(s.tpValueToMatchNum[i].asMap(), names, counts)
		f.ids[i], f.counts[i] = ids, counts
	}
	return f
}

// pathsByID copies each domain's count of m to counts[id] (names lists the
// domains by id) and returns m's two smallest domains, as twoSmallest
// would: the order domains are offered in does not matter, as (count,
// name) orders them fully. Every domain of m is a snapshot node's value;
// were one not, the paths come from twoSmallest.
func pathsByID(m map[string]int, names []string, counts []int) *criticalPaths {
	p := newCriticalPaths()
	n := 0
	for id, v := range names {
		num, ok := m[v]
		if !ok {
			continue
		}
		counts[id] = num
		p.offer(n, v, num)
		n++
	}
	if n != len(m) {
		return twoSmallest(m)
	}
	return p
}

// filter is Filter's verdict for a snapshot node (ok false otherwise).
func (f *fastFilter) filter(s *preFilterState, pi *framework.PodInfo, ni *framework.NodeInfo) (*framework.Status, bool) {
	p, ok := f.pos[ni]
	if !ok {
		return nil, false
	}
	for i := range s.constraints {
		c := &s.constraints[i]
		id := f.ids[i][p]
		if id < 0 {
			return s.rejection(0), true
		}
		if f.counts[i][id]+s.self(i, pi)-s.minMatchNum(i, c.MinDomains) > int(c.MaxSkew) {
			return s.rejection(1), true
		}
	}
	return nil, true
}
