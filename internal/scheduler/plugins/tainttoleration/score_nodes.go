package tainttoleration

import (
	"fmt"

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
