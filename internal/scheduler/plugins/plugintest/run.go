package plugintest

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// FilterPlugin is a plugin with PreFilter and Filter.
type FilterPlugin interface {
	framework.PreFilterPlugin
	framework.FilterPlugin
}

// ScorePlugin is a plugin with PreScore and Score.
type ScorePlugin interface {
	framework.PreScorePlugin
	framework.ScorePlugin
}

// Verdict is a status flattened for comparison in tests.
type Verdict struct {
	Code   framework.Code
	Reason string
}

// VerdictOf flattens a status (nil is Success with no reason).
func VerdictOf(s *framework.Status) Verdict {
	return Verdict{Code: s.Code(), Reason: s.Message()}
}

// RunFilter runs PreFilter over all nodes and, unless it was rejected or
// skipped, Filter on every node. It returns the PreFilter status and the
// per-node verdicts (nil when Filter did not run).
func RunFilter(pl FilterPlugin, h *Handle, pod *v1.Pod) (*framework.Status, map[string]Verdict) {
	cs := framework.NewCycleState()
	pi := framework.NewPodInfo(pod, true)
	_, st := pl.PreFilter(cs, pi, h.Nodes())
	if !st.IsSuccess() {
		return st, nil
	}
	out := map[string]Verdict{}
	for _, ni := range h.Nodes() {
		out[ni.Name()] = VerdictOf(pl.Filter(cs, pi, ni))
	}
	return st, out
}

// RunScore runs PreScore over the named feasible nodes (all when nil), then
// Score and NormalizeScore. It returns the PreScore status, the raw scores and
// the normalized scores, in node order.
func RunScore(pl ScorePlugin, h *Handle, pod *v1.Pod, feasible []string) (*framework.Status, framework.NodeScoreList, framework.NodeScoreList) {
	cs := framework.NewCycleState()
	pi := framework.NewPodInfo(pod, true)
	var nodes []*framework.NodeInfo
	if feasible == nil {
		nodes = h.Nodes()
	} else {
		for _, n := range feasible {
			nodes = append(nodes, h.Node(n))
		}
	}
	st := pl.PreScore(cs, pi, nodes)
	if !st.IsSuccess() {
		return st, nil, nil
	}
	var raw framework.NodeScoreList
	for _, ni := range nodes {
		sc, s := pl.Score(cs, pi, ni)
		if !s.IsSuccess() {
			return s, nil, nil
		}
		raw = append(raw, framework.NodeScore{Name: ni.Name(), Score: sc})
	}
	norm := append(framework.NodeScoreList(nil), raw...)
	if ext := pl.ScoreExtensions(); ext != nil {
		if s := ext.NormalizeScore(cs, pi, norm); !s.IsSuccess() {
			return s, nil, nil
		}
	}
	return nil, raw, norm
}

// Scores turns a score list into name -> score.
func Scores(l framework.NodeScoreList) map[string]int64 {
	out := make(map[string]int64, len(l))
	for _, s := range l {
		out[s.Name] = s.Score
	}
	return out
}
