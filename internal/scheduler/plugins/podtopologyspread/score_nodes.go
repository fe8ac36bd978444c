package podtopologyspread

import (
	"encoding/binary"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// ScoreNodes is Score over every node, in order, reading the state once
// (framework.BatchScorePlugin); the fast path's raw scores are handed out
// as the sequential calls would take them.
func (pl *Plugin) ScoreNodes(cs *framework.CycleState, pi *framework.PodInfo, nodes []*framework.NodeInfo, scores framework.NodeScoreList) *framework.Status {
	if len(nodes) == 0 {
		return nil
	}
	s, err := pl.preScoreStateOf(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	i := 0
	if f := s.fast; f != nil && f.buf.owner == f && f.at == 0 {
		// PreScore's own list: the raw scores are copied while the nodes
		// are the ones it scored, in its order (what next would hand out).
		raw := f.buf.raw
		for n := min(len(nodes), len(f.nodes)); i < n && f.nodes[i] == nodes[i]; i++ {
			scores[i].Score = raw[i]
		}
		f.at = i
	}
	for ; i < len(nodes); i++ {
		scores[i].Score = pl.score(s, pi, nodes[i])
	}
	return nil
}

// NormalizeReadsNames: NormalizeScore reads the names only to find the
// ignored nodes (framework.NameBlindNormalizer).
func (pl *Plugin) NormalizeReadsNames(cs *framework.CycleState) bool {
	s, err := pl.preScoreStateOf(cs)
	return err != nil || s.ignoredNodes.Len() > 0
}

// indexedLabelsFor is newIndexedLabels(cs), kept for the index's lifetime
// by the constraints' topology keys: everything it holds (node positions,
// the nodes carrying every key, value ids and names) is the index's and
// fixed until the index resets, which drops the selections and this with
// them. Must be called with pl.mu held; the result is only read.
func (pl *Plugin) indexedLabelsFor(cs []constraint) *indexedLabels {
	sels := pl.selectionsLocked()
	// The key is built on the stack (two keys of the system defaults fit);
	// the map lookup by string(b) does not keep it.
	var buf [64]byte
	b := buf[:0]
	for i := range cs {
		b = binary.AppendUvarint(b, uint64(len(cs[i].TopologyKey)))
		b = append(b, cs[i].TopologyKey...)
	}
	if ix, ok := sels.labels[string(b)]; ok {
		return ix
	}
	ix := pl.newIndexedLabels(cs)
	if sels.labels == nil {
		sels.labels = map[string]*indexedLabels{}
	}
	sels.labels[string(b)] = ix
	return ix
}
