package podtopologyspread

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// pairTableHosts bounds the hostname counts pairScores keeps in its table;
// a node with more matching pods is scored directly. A variable so that a
// test can make the direct path common.
var pairTableHosts = 64

// pairTable is the raw score by (domain id, hostname count) for one
// PreScore, filled as nodes ask for entries; the plugin keeps its arrays
// from cycle to cycle (used with the plugin's lock held).
type pairTable struct {
	raw    []int64
	filled []bool
}

// pairScores is preScoreFast's per-node loop for the common pair of
// constraints, one on the hostname and one on a key whose domain counts
// are in a table by value id (the system defaults: hostname and zone).
// A node's raw score depends on its own matching pod count and its
// domain's count alone, so the nodes of one domain with one count share
// it: computed once per (domain, count) by pairRaw — the loop's own
// arithmetic, term by term in constraint order — and handed to the rest,
// so the results are the same (TestPairScoresMatchLoop). Reports false,
// having written nothing, when the constraints are not such a pair.
func (pl *Plugin) pairScores(s *preScoreState, ix *indexedLabels, hosts []*selection, byID [][]int64, filtered []*framework.NodeInfo, at []int32, raw []int64) bool {
	if len(s.constraints) != 2 {
		return false
	}
	h := 0
	if s.constraints[1].TopologyKey == v1.LabelHostname {
		h = 1
	}
	d := 1 - h
	if s.constraints[h].TopologyKey != v1.LabelHostname || hosts[h] == nil ||
		s.constraints[d].TopologyKey == v1.LabelHostname || byID[d] == nil {
		return false
	}
	perNode, hostIDs, domIDs := hosts[h].perNode, ix.ids[h], ix.ids[d]
	width := pairTableHosts
	t := &pl.pairs
	n := len(byID[d]) * width
	if cap(t.raw) < n {
		t.raw, t.filled = make([]int64, n), make([]bool, n)
	}
	t.raw, t.filled = t.raw[:n], t.filled[:n]
	clear(t.filled)
	for k := range filtered {
		p := at[k]
		if p < 0 {
			continue
		}
		hostOK, dom := hostIDs[p] >= 0, domIDs[p]
		count := int64(perNode[p])
		if !hostOK || dom < 0 || count >= int64(width) {
			raw[k] = pairRaw(s, h, hostOK, count, dom, byID[d])
			continue
		}
		e := int(dom)*width + int(count)
		if !t.filled[e] {
			t.raw[e], t.filled[e] = pairRaw(s, h, true, count, dom, byID[d]), true
		}
		raw[k] = t.raw[e]
	}
	return true
}

// pairRaw is one node's raw score as preScoreFast's loop computes it, for
// the hostname constraint h (counted when hostOK, the node carrying the
// key) and the other one (dom its value id, negative when missing).
func pairRaw(s *preScoreState, h int, hostOK bool, count int64, dom int32, domCounts []int64) int64 {
	var score float64
	for i := range s.constraints {
		c := &s.constraints[i]
		var n int64
		if i == h {
			if !hostOK {
				continue
			}
			n = count
		} else {
			if dom < 0 {
				continue
			}
			n = domCounts[dom]
		}
		score += scoreForCount(n, c.MaxSkew, s.topologyNormalizingWeight[i])
	}
	if score >= 0 && score < 1<<52 {
		return roundSmall(score)
	}
	return roundScore(score)
}
