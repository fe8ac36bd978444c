package podtopologyspread

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// fastScores holds the raw scores PreScore computed for the feasible nodes,
// in the order it got them. The framework then asks Score node after node
// in that same order, so the next answer is found by comparing one pointer
// rather than by looking the node up. Score calls are sequential (the
// framework's score loop); a call out of that order is answered by the
// plain computation.
type fastScores struct {
	nodes []*framework.NodeInfo
	buf   *scoreBuffer
	at    int
}

// scoreBuffer is the plugin's array of raw scores, reused cycle after
// cycle (a cycle scores hundreds of nodes). It belongs to the fastScores
// of the latest PreScore; an older one no longer reads it.
type scoreBuffer struct {
	owner *fastScores
	raw   []int64
}

// take makes f the buffer's owner with n zeroed scores.
func (b *scoreBuffer) take(f *fastScores, n int) []int64 {
	b.owner = f
	b.raw = slices.Grow(b.raw[:0], n)[:n]
	clear(b.raw)
	return b.raw
}

// next returns ni's raw score when ni is the node expected next.
func (f *fastScores) next(ni *framework.NodeInfo) (int64, bool) {
	if f == nil || f.buf.owner != f || f.at >= len(f.nodes) || f.nodes[f.at] != ni {
		return 0, false
	}
	f.at++
	return f.buf.raw[f.at-1], true
}

// preScoreMemo pairs a cycle state with the preScoreState PreScore wrote
// to it. Score runs once per feasible node, and reading the state back from
// the cycle state's map each time costs more than the rest of a fast Score.
type preScoreMemo struct {
	cs *framework.CycleState
	s  *preScoreState
}

// preScoreStateOf is getPreScoreState, answered from the memo when cs is
// the cycle state PreScore wrote last (a clone is another state and reads
// the map).
func (pl *Plugin) preScoreStateOf(cs *framework.CycleState) (*preScoreState, error) {
	if m := pl.lastPreScore.Load(); m != nil && m.cs == cs {
		return m.s, nil
	}
	return getPreScoreState(cs)
}

// positionsOf returns the positions of nodes in all (the snapshot list), in
// buf's array when it is big enough, or nil when one of them is not a
// snapshot node. The feasible nodes come in
// search order, snapshot order from some start with the infeasible ones
// left out, so the next few positions are tried before the map.
func positionsOf(buf []int32, all, nodes []*framework.NodeInfo, pos map[*framework.NodeInfo]int32) []int32 {
	const scan = 8
	at := slices.Grow(buf[:0], len(nodes))[:len(nodes)]
	n := len(all)
	next := 0
	for k, ni := range nodes {
		// The position the snapshot numbered the node with, when all holds
		// it there (framework.NodeInfo.Index); else a short scan, then the map.
		if q := int(ni.Index); q >= 0 && q < n && all[q] == ni {
			at[k] = int32(q)
			next = q + 1
			if next >= n {
				next = 0
			}
			continue
		}
		p := int32(-1)
		for j := 0; j < scan && j < n; j++ {
			q := next + j
			if q >= n {
				q -= n
			}
			if all[q] == ni {
				p = int32(q)
				break
			}
		}
		if p < 0 {
			var ok bool
			if p, ok = pos[ni]; !ok {
				return nil
			}
		}
		at[k] = p
		next = int(p) + 1
		if next >= n {
			next = 0
		}
	}
	return at
}

// preScoreFast is PreScore for feasible nodes that are all snapshot nodes
// (at holds their positions; it marks the ignored ones -1), with
// s.constraints set. Labels are read by position through the index, the
// domain counts come from the selections (preScoreFromIndex), and the raw
// score of every feasible node is computed here, reading the hostname
// counts from the selections' per-node arrays; Score then only hands them
// out. The arithmetic is Score's, term by term in constraint order, so the
// results are the same.
func (pl *Plugin) preScoreFast(s *preScoreState, pod *v1.Pod, filtered []*framework.NodeInfo, at []int32, requireAll bool) {
	ix := pl.indexedLabelsFor(s.constraints)
	s.ix = ix
	nc := len(s.constraints)
	seen := make([][]bool, nc)
	missing := make([]bool, nc)
	// When every node carries every key, no node is ignored and none
	// yields the domain "", so the walk may stop once it has seen every
	// value of every non-hostname key: the domains of the rest are among
	// them (docs/scheduler.md#session-24-score).
	complete := true
	var unseenBuf [4]int
	unseen := unseenBuf[:]
	if nc > len(unseenBuf) {
		unseen = make([]int, nc)
	}
	open := 0
	for i := range s.constraints {
		if pl.index.Missing(s.constraints[i].TopologyKey) > 0 {
			complete = false
		}
		if s.constraints[i].TopologyKey != v1.LabelHostname {
			seen[i] = make([]bool, len(ix.names[i]))
			if unseen[i] = len(ix.names[i]); unseen[i] > 0 {
				open++
			}
		}
	}
	for k, ni := range filtered {
		if complete && open == 0 {
			break
		}
		p := at[k]
		if requireAll && !ix.holders.Has(p) {
			// Ignored: scored 0, no position needed any more.
			s.ignoredNodes.Insert(ni.Node.Name)
			at[k] = -1
			continue
		}
		for i := range s.constraints {
			if seen[i] == nil {
				continue
			}
			if id := ix.ids[i][p]; id >= 0 {
				if !seen[i][id] {
					seen[i][id] = true
					if unseen[i]--; unseen[i] == 0 {
						open--
					}
				}
			} else {
				// A missing key yields the domain "" (only with system defaults).
				missing[i] = true
			}
		}
	}
	s.topologyValueToPodCounts = make([]map[string]int64, nc)
	for i := range s.constraints {
		m := make(map[string]int64)
		for id, ok := range seen[i] {
			if ok {
				m[ix.names[i][id]] = 0
			}
		}
		if missing[i] {
			m[""] = 0
		}
		s.topologyValueToPodCounts[i] = m
	}
	s.setWeights(len(filtered))
	pl.preScoreFromIndex(s, pod, requireAll)

	// Per constraint: the selection for hostname counts, or the domain
	// counts by value id (a table only as long as it is cheap to fill).
	sels := pl.selectionsLocked()
	hosts := make([]*selection, nc)
	byID := make([][]int64, nc)
	for i := range s.constraints {
		c := &s.constraints[i]
		if c.TopologyKey == v1.LabelHostname {
			hosts[i] = sels.get(pod.Namespace, c.Selector)
			continue
		}
		if len(ix.names[i]) > 4*len(filtered)+64 {
			continue
		}
		_, values := pl.index.ValueIDs(c.TopologyKey)
		byID[i] = make([]int64, len(ix.names[i]))
		for v, n := range s.topologyValueToPodCounts[i] {
			if id, ok := values[v]; ok {
				byID[i][id] = n
			}
		}
	}
	f := &fastScores{nodes: filtered, buf: &sels.scores}
	raw := sels.scores.take(f, len(filtered))
	if pl.pairScores(s, ix, hosts, byID, filtered, at, raw) {
		s.fast = f
		return
	}
	for k := range filtered {
		p := at[k]
		if p < 0 {
			continue
		}
		var score float64
		for i := range s.constraints {
			c := &s.constraints[i]
			id := ix.ids[i][p]
			if id < 0 {
				continue
			}
			var count int64
			switch {
			case c.TopologyKey == v1.LabelHostname:
				if hosts[i] != nil {
					count = int64(hosts[i].perNode[p])
				}
			case byID[i] != nil:
				count = byID[i][id]
			default:
				count = s.topologyValueToPodCounts[i][ix.names[i][id]]
			}
			score += scoreForCount(count, c.MaxSkew, s.topologyNormalizingWeight[i])
		}
		// roundScore's common case inlined: the call costs more than the
		// rest of the node's score.
		if score >= 0 && score < 1<<52 {
			raw[k] = roundSmall(score)
		} else {
			raw[k] = roundScore(score)
		}
	}
	s.fast = f
}
