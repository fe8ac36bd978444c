package interpodaffinity

import (
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// scoreMap is topologyKey -> topology value -> accumulated weight.
type scoreMap map[string]map[string]int64

func (m scoreMap) processTerm(term *framework.AffinityTerm, weight int32, pod *v1.Pod, nsLabels labels.Set, node *v1.Node, multiplier int32) {
	if !term.Matches(pod, nsLabels) {
		return
	}
	value, ok := node.Labels[term.TopologyKey]
	if !ok {
		return
	}
	inner := m[term.TopologyKey]
	if inner == nil {
		inner = make(map[string]int64)
		m[term.TopologyKey] = inner
	}
	inner[value] += int64(weight * multiplier)
}

func (m scoreMap) processTerms(terms []framework.WeightedAffinityTerm, pod *v1.Pod, nsLabels labels.Set, node *v1.Node, multiplier int32) {
	for i := range terms {
		m.processTerm(&terms[i].AffinityTerm, terms[i].Weight, pod, nsLabels, node, multiplier)
	}
}

// preScoreState is the per-domain score built in PreScore.
type preScoreState struct {
	topologyScore scoreMap
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
	pod := pi.Pod
	hasConstraints := len(pi.PreferredAffinityTerms) > 0 || len(pi.PreferredAntiAffinityTerms) > 0
	if pl.args.IgnorePreferredTermsOfExistingPods && !hasConstraints {
		return framework.NewStatus(framework.Skip)
	}

	// Without preferred terms of its own, only pods that have terms matter.
	var candidates []*framework.NodeInfo
	if hasConstraints {
		candidates = pl.handle.Nodes()
	} else {
		// No existing pod with scoring terms: nothing could be added below.
		pl.mu.Lock()
		pl.index.domains.Update(pl.handle, pl.handle.Nodes())
		none := pl.index.scoringPods == 0
		pl.mu.Unlock()
		if none {
			return framework.NewStatus(framework.Skip)
		}
		candidates = pl.handle.HavePodsWithAffinity()
	}
	affinity := resolveWeighted(pl, pi.PreferredAffinityTerms)
	antiAffinity := resolveWeighted(pl, pi.PreferredAntiAffinityTerms)
	nsLabels := pl.namespaceLabels(pod.Namespace)

	score := make(scoreMap)
	for _, ni := range candidates {
		node := ni.Node
		if node == nil || len(node.Labels) == 0 {
			continue
		}
		existingPods := ni.PodsWithAffinity
		if hasConstraints {
			existingPods = ni.Pods
		}
		for _, existing := range existingPods {
			// The incoming pod's terms carry resolved namespaces.
			score.processTerms(affinity, existing.Pod, nil, node, 1)
			score.processTerms(antiAffinity, existing.Pod, nil, node, -1)
			if pl.args.HardPodAffinityWeight > 0 {
				for i := range existing.RequiredAffinityTerms {
					score.processTerm(&existing.RequiredAffinityTerms[i], pl.args.HardPodAffinityWeight, pod, nsLabels, node, 1)
				}
			}
			score.processTerms(existing.PreferredAffinityTerms, pod, nsLabels, node, 1)
			score.processTerms(existing.PreferredAntiAffinityTerms, pod, nsLabels, node, -1)
		}
	}
	if len(score) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	cs.Write(preScoreStateKey, &preScoreState{topologyScore: score})
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
	node := nodeInfo.Node
	var score int64
	// Integer sums commute, so map order cannot change the result.
	for key, values := range s.topologyScore {
		if v, ok := node.Labels[key]; ok {
			score += values[v]
		}
	}
	return score, nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *Plugin) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps raw scores min..max onto 0..100 (float, then truncated).
func (pl *Plugin) NormalizeScore(cs *framework.CycleState, _ *framework.PodInfo, scores framework.NodeScoreList) *framework.Status {
	s, err := getPreScoreState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.topologyScore) == 0 {
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
