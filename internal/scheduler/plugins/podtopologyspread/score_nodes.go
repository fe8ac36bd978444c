package podtopologyspread

import "github.com/berth-sim/berth/internal/scheduler/framework"

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
	for i, ni := range nodes {
		scores[i].Score = pl.score(s, pi, ni)
	}
	return nil
}

// NormalizeReadsNames: NormalizeScore reads the names only to find the
// ignored nodes (framework.NameBlindNormalizer).
func (pl *Plugin) NormalizeReadsNames(cs *framework.CycleState) bool {
	s, err := pl.preScoreStateOf(cs)
	return err != nil || s.ignoredNodes.Len() > 0
}
