package podtopologyspread

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// domainsPerNodeShare: renumbering pays when the domains number at most
// one in this many nodes (tests set 0 to renumber always).
var domainsPerNodeShare = 8

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

// buildFastFilter renumbers s's counts; nodes must be the list the index
// was updated with. It returns nil when renumbering would cost more than
// the map lookups it saves (more domains than nodes Filter may visit).
func (pl *Plugin) buildFastFilter(s *preFilterState, nodes []*framework.NodeInfo) *fastFilter {
	x := pl.index
	if x.NumNodes() != len(nodes) {
		return nil
	}
	domains := 0
	for i := range s.constraints {
		domains += len(s.tpValueToMatchNum[i])
	}
	if domains*domainsPerNodeShare > len(nodes) {
		// Hostname-like keys: as many domains as nodes, and a cycle that
		// succeeds visits a tenth of them or fewer.
		return nil
	}
	f := &fastFilter{pos: x.Positions(), ids: make([][]int32, len(s.constraints)), counts: make([][]int, len(s.constraints))}
	for i := range s.constraints {
		ids, byValue := x.ValueIDs(s.constraints[i].TopologyKey)
		counts := make([]int, len(byValue))
		for v, n := range s.tpValueToMatchNum[i] {
			if id, ok := byValue[v]; ok {
				counts[id] = n
			}
		}
		f.ids[i], f.counts[i] = ids, counts
	}
	return f
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
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch), true
		}
		if f.counts[i][id]+s.self(i, pi)-s.minMatchNum(i, c.MinDomains) > int(c.MaxSkew) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch), true
		}
	}
	return nil, true
}
