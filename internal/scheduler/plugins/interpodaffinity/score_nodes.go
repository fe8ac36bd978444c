package interpodaffinity

import "github.com/berth-sim/berth/internal/scheduler/framework"

// ScoreNodes is Score over every node, reading the state once
// (framework.BatchScorePlugin).
func (pl *Plugin) ScoreNodes(cs *framework.CycleState, _ *framework.PodInfo, nodes []*framework.NodeInfo, scores framework.NodeScoreList) *framework.Status {
	if len(nodes) == 0 {
		return nil
	}
	s, err := getPreScoreState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	for i, ni := range nodes {
		scores[i].Score = s.score(ni)
	}
	return nil
}

// NormalizeReadsNames: min-max scaling needs no names
// (framework.NameBlindNormalizer).
func (pl *Plugin) NormalizeReadsNames(*framework.CycleState) bool { return false }
