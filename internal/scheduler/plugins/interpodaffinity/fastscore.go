package interpodaffinity

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// fastScore is the per-domain score renumbered by the index's value ids, so
// that Score on a snapshot node reads a position and a slice per topology
// key instead of the node's label map and a string-keyed score map. Nodes
// outside the snapshot take the map path; both sum the same integers.
type fastScore struct {
	pos  helper.NodePositions
	keys []fastScoreKey
}

type fastScoreKey struct {
	ids []int32
	// byID is the domain's score by value id (absent domains score 0).
	byID []int64
}

func buildFastScore(score scoreMap, x *helper.ClassDomainIndex) *fastScore {
	f := &fastScore{pos: x.NodePositions(), keys: make([]fastScoreKey, 0, len(score))}
	for key, values := range score {
		ids, byValue := x.ValueIDs(key)
		k := fastScoreKey{ids: ids, byID: make([]int64, len(byValue))}
		for v, n := range values {
			if id, ok := byValue[v]; ok {
				k.byID[id] = n
			}
		}
		f.keys = append(f.keys, k)
	}
	return f
}

// score is Score's sum for a snapshot node; ok is false for other nodes.
func (f *fastScore) score(ni *framework.NodeInfo) (int64, bool) {
	p, ok := f.pos.Of(ni)
	if !ok {
		return 0, false
	}
	var sum int64
	for i := range f.keys {
		if id := f.keys[i].ids[p]; id >= 0 {
			sum += f.keys[i].byID[id]
		}
	}
	return sum, true
}
