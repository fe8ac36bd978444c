package interpodaffinity

import (
	"fmt"
	"math"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// scoreMap is topologyKey -> topology value -> accumulated weight.
type scoreMap map[string]map[string]int64

// preScoreState is the per-domain score built in PreScore: by value id
// (fast, fastscore.go), or in map form when some domain had no id.
type preScoreState struct {
	topologyScore scoreMap
	fast          *fastScore
}

// empty tells whether no domain got a score.
func (s *preScoreState) empty() bool {
	return len(s.topologyScore) == 0 && (s.fast == nil || !s.fast.any)
}

// Clone shares the state: Score only reads it.
func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore accumulates, per topology domain, the incoming pod's preferred
// (anti-)affinity towards existing pods and the existing pods' required
// affinity and preferred (anti-)affinity towards the incoming pod.
func (pl *Plugin) PreScore(cs *framework.CycleState, pi *framework.PodInfo, nodes []*framework.NodeInfo) *framework.Status {
	if len(nodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	if pi.ParseError != nil {
		return framework.AsStatus(fmt.Errorf("failed to parse pod: %w", pi.ParseError))
	}
	hasConstraints := len(pi.PreferredAffinityTerms) > 0 || len(pi.PreferredAntiAffinityTerms) > 0
	if pl.args.IgnorePreferredTermsOfExistingPods && !hasConstraints {
		return framework.NewStatus(framework.Skip)
	}

	affinity := resolveWeighted(pl, pi.PreferredAffinityTerms)
	antiAffinity := resolveWeighted(pl, pi.PreferredAntiAffinityTerms)
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.index.domains.Update(pl.handle, pl.handle.Nodes())
	if !hasConstraints && pl.index.scoringPods == 0 {
		// No existing pod with scoring terms: nothing could be added.
		return framework.NewStatus(framework.Skip)
	}
	fast := newFastScore(pl.index.domains)
	pl.scoreFromIndex(pl.index, pi, affinity, antiAffinity, fast)
	if fast.incomplete {
		score := make(scoreMap)
		pl.scoreFromIndex(pl.index, pi, affinity, antiAffinity, score)
		if len(score) == 0 {
			return framework.NewStatus(framework.Skip)
		}
		cs.Write(preScoreStateKey, &preScoreState{topologyScore: score})
		return nil
	}
	if !fast.any {
		return framework.NewStatus(framework.Skip)
	}
	cs.Write(preScoreStateKey, &preScoreState{fast: fast})
	return nil
}

func getPreScoreState(cs *framework.CycleState) (*preScoreState, error) {
	d := cs.Read(preScoreStateKey)
	if d == nil {
		return nil, fmt.Errorf("reading %q from cycleState: %w", preScoreStateKey, errNotFound)
	}
	s, ok := d.(*preScoreState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to interpodaffinity.preScoreState error", d)
	}
	return s, nil
}

// Score sums the domain scores of every topology key the node carries.
func (pl *Plugin) Score(cs *framework.CycleState, _ *framework.PodInfo, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := getPreScoreState(cs)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	return s.score(nodeInfo), nil
}

// score is Score once the state is read.
func (s *preScoreState) score(nodeInfo *framework.NodeInfo) int64 {
	if s.fast != nil {
		if score, ok := s.fast.score(nodeInfo); ok {
			return score
		}
		return s.fast.scoreByLabels(nodeInfo)
	}
	node := nodeInfo.Node
	var score int64
	// Integer sums commute, so map order cannot change the result.
	for key, values := range s.topologyScore {
		if v, ok := node.Labels[key]; ok {
			score += values[v]
		}
	}
	return score
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *Plugin) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps raw scores min..max onto 0..100 (float, then truncated).
func (pl *Plugin) NormalizeScore(cs *framework.CycleState, _ *framework.PodInfo, scores framework.NodeScoreList) *framework.Status {
	s, err := getPreScoreState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.empty() {
		return nil
	}
	var minCount int64 = math.MaxInt64
	var maxCount int64 = math.MinInt64
	for i := range scores {
		if scores[i].Score > maxCount {
			maxCount = scores[i].Score
		}
		if scores[i].Score < minCount {
			minCount = scores[i].Score
		}
	}
	diff := maxCount - minCount
	for i := range scores {
		f := float64(0)
		if diff > 0 {
			f = float64(framework.MaxNodeScore) * (float64(scores[i].Score-minCount) / float64(diff))
		}
		scores[i].Score = int64(f)
	}
	return nil
}
