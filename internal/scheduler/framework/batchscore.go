package framework

// BatchScorePlugin is a ScorePlugin that can score all of a cycle's
// feasible nodes in one call. Per node, Score reads the plugin's PreScore
// state back from the cycle state's map and goes through an interface
// call; a cycle scores hundreds of nodes, so doing that once per cycle
// rather than once per node is most of Score's cost for the cheap plugins
// (docs/scheduler.md#scoring-a-cycle-in-one-call).
//
// The contract: after ScoreNodes(state, pod, nodes, scores) returns
// success, scores[i].Score is what Score(state, pod, nodes[i]) would have
// returned had Score been called on each node in order, and any state the
// plugin keeps is left as those calls would leave it. On a failure the
// status is the one the first failing Score call would have returned.
// ScoreNodes writes only the Score fields (the Name fields are the
// framework's, and may not be set yet when it is called).
type BatchScorePlugin interface {
	ScorePlugin
	ScoreNodes(state *CycleState, pod *PodInfo, nodes []*NodeInfo, scores NodeScoreList) *Status
}

// NameBlindNormalizer is a ScoreExtensions that may say, per cycle, that
// its NormalizeScore will not read the NodeScore.Name fields; the
// framework then need not fill them (reading a node's name leads through
// its NodeInfo to the Node, a cache miss per node). Normalizers that do
// not implement it always get the names.
type NameBlindNormalizer interface {
	ScoreExtensions
	NormalizeReadsNames(state *CycleState) bool
}

// NodeLocalScorePlugin is a BatchScorePlugin whose raw score on a node is a
// function of three things only: the NodeInfo as it stands (every change
// to it bumps its Generation), what the plugin reads from the pod this
// cycle, and data the handle keeps fixed for one snapshot (node count,
// image spread). AppendScoreShape appends to key a spelling of the second:
// two cycles of one snapshot whose shapes are equal get equal raw scores
// on an unchanged node, so the framework may keep them per node and reuse
// them (docs/scheduler.md#session-24-score). ok false means the score is
// not node-local this cycle (the framework then calls ScoreNodes as
// usual). It is called after PreScore, with that cycle's state.
type NodeLocalScorePlugin interface {
	BatchScorePlugin
	AppendScoreShape(state *CycleState, pod *PodInfo, key []byte) (out []byte, ok bool)
}

// NodeLocalFilterPlugin is a FilterPlugin whose verdict on a node is a
// function of the NodeInfo as it stands (its Generation) and of what the
// plugin reads from the pod this cycle, which AppendFilterShape spells out
// into key; ok false means not this cycle. The framework may then keep
// verdicts per node and hand out a kept status again: such a plugin's
// statuses must be safe to share (never changed once returned, but for
// the framework tagging them with the plugin's name).
type NodeLocalFilterPlugin interface {
	FilterPlugin
	AppendFilterShape(state *CycleState, pod *PodInfo, key []byte) (out []byte, ok bool)
}
