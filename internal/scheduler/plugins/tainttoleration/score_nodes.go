package tainttoleration

import (
	"encoding/binary"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// ScoreNodes is Score over every node, reading the state once
// (framework.BatchScorePlugin).
func (pl *TaintToleration) ScoreNodes(state *framework.CycleState, _ *framework.PodInfo, nodes []*framework.NodeInfo, scores framework.NodeScoreList) *framework.Status {
	if len(nodes) == 0 {
		return nil
	}
	s, ok := state.Read(preScoreStateKey).(*preScoreState)
	if !ok {
		return framework.AsStatus(fmt.Errorf("reading %q from cycleState: not found", preScoreStateKey))
	}
	for i, ni := range nodes {
		scores[i].Score = s.score(ni)
	}
	return nil
}

// NormalizeReadsNames: the counts are reversed without the names
// (framework.NameBlindNormalizer).
func (pl *TaintToleration) NormalizeReadsNames(*framework.CycleState) bool { return false }

// scoreMemo shares Score's per-class counts between pods of one snapshot
// whose PreferNoSchedule tolerations are equal: a count depends only on
// the class's taint list and those tolerations, so the lazily filled
// array of one pod is right for the next (docs/scheduler.md#taints-by-taint-list).
type scoreMemo struct {
	tbl   *taintTable
	byKey map[string][]int64
	key   []byte
}

// maxScoreMemos bounds the toleration lists remembered per snapshot.
const maxScoreMemos = 1024

// counts returns the per-class counts (-1: not yet counted) for tols on
// tbl's classes.
func (m *scoreMemo) counts(tbl *taintTable, tols []v1.Toleration) []int64 {
	if m.tbl != tbl || len(m.byKey) >= maxScoreMemos {
		m.tbl, m.byKey = tbl, map[string][]int64{}
	}
	m.key = appendTolerationsKey(m.key[:0], tols)
	if c, ok := m.byKey[string(m.key)]; ok {
		return c
	}
	c := make([]int64, len(tbl.taints))
	for i := range c {
		c[i] = -1
	}
	m.byKey[string(m.key)] = c
	return c
}

// appendTolerationsKey spells out every field of every toleration, in
// order, each length-prefixed.
func appendTolerationsKey(b []byte, tols []v1.Toleration) []byte {
	part := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, t := range tols {
		part(t.Key)
		part(string(t.Operator))
		part(t.Value)
		part(string(t.Effect))
		if t.TolerationSeconds != nil {
			b = binary.AppendVarint(append(b, 1), *t.TolerationSeconds)
		} else {
			b = append(b, 0)
		}
	}
	return b
}
