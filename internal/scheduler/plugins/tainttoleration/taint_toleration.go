// Package tainttoleration filters nodes by NoSchedule/NoExecute taints the pod
// does not tolerate and scores nodes by their untolerated PreferNoSchedule taints.
package tainttoleration

import (
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Name is the plugin's name in the profile.
const Name = "TaintToleration"

// ErrReasonUntolerated is the reason from 1.34.2 on; older releases name the
// taint (see untoleratedReason).
const ErrReasonUntolerated = "node(s) had untolerated taint(s)"

const preScoreStateKey framework.StateKey = "PreScore" + Name

// TaintToleration is the plugin.
type TaintToleration struct {
	keyValueText bool
	handle       framework.Handle
	// tbl and memo answer nodes by taint class (table.go).
	tbl *taintTable
	// memo is the memo of the pod last filtered, memos every memo of the
	// snapshot by tolerations (tolerationsKey); key is scratch space.
	memo  *filterMemo
	memos map[string]*filterMemo
	key   strings.Builder
	// untolerated is the shared rejection when the reason names no taint.
	untolerated *framework.Status
	// scores keeps Score's counts per taint class across pods (score_nodes.go).
	scores scoreMemo
}

// New builds the plugin; the reason text follows the cluster's version.
func New(h framework.Handle) framework.Plugin {
	return &TaintToleration{keyValueText: h.Features().TaintKeyValueText, handle: h}
}

func (*TaintToleration) Name() string { return Name }

// StaticFilter marks the verdict as depending only on the node and the pod's tolerations.
func (*TaintToleration) StaticFilter() {}

// Filter rejects the node on its first untolerated NoSchedule/NoExecute
// taint. Nodes of the snapshot are answered once per taint list per pod.
func (pl *TaintToleration) Filter(_ *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	c := pl.table().class(nodeInfo)
	if c < 0 {
		return pl.filter(nodeInfo.Node.Spec.Taints, pod.Pod)
	}
	if c == 0 {
		return nil // no taints
	}
	m := pl.memoFor(pod.Pod)
	if !m.done[c] {
		m.done[c], m.st[c] = true, pl.filter(pl.tbl.taints[c], pod.Pod)
	}
	return m.st[c]
}

func (pl *TaintToleration) filter(taints []v1.Taint, pod *v1.Pod) *framework.Status {
	taint := firstUntolerated(taints, pod.Spec.Tolerations)
	if taint == nil {
		return nil
	}
	if !pl.keyValueText {
		// The reason names no taint: one status serves every rejection
		// (statuses are not changed once made, but for the plugin's name).
		if pl.untolerated == nil {
			pl.untolerated = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUntolerated)
		}
		return pl.untolerated
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, pl.untoleratedReason(taint))
}

// firstUntolerated is FindMatchingUntoleratedTaint with the NoSchedule and
// NoExecute filter, without copying the filtered taints into a new list
// (each pod meets hundreds of taint lists in a failed cycle): the first such
// taint no toleration tolerates, or nil (docs/scheduler.md#failed-cycles-by-position).
func firstUntolerated(taints []v1.Taint, tolerations []v1.Toleration) *v1.Taint {
	for i := range taints {
		t := &taints[i]
		if !helper.DoNotScheduleTaints(t) {
			continue
		}
		if !corev1helpers.TolerationsTolerateTaint(logr.Discard(), tolerations, t, false) {
			return t
		}
	}
	return nil
}

func (pl *TaintToleration) untoleratedReason(taint *v1.Taint) string {
	if pl.keyValueText {
		return fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value)
	}
	return ErrReasonUntolerated
}

type preScoreState struct {
	tolerationsPreferNoSchedule []v1.Toleration
	// byClass caches Score per taint class of tbl (-1: not yet known).
	tbl     *taintTable
	byClass []int64
}

func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore keeps the tolerations that can tolerate PreferNoSchedule taints.
func (pl *TaintToleration) PreScore(state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo) *framework.Status {
	if len(nodes) == 0 {
		return nil
	}
	var tols []v1.Toleration
	for _, t := range pod.Pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == v1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	ps := &preScoreState{tolerationsPreferNoSchedule: tols}
	if tbl := pl.table(); tbl != nil {
		ps.tbl, ps.byClass = tbl, pl.scores.counts(tbl, tols)
	}
	state.Write(preScoreStateKey, ps)
	return nil
}

// Score counts the node's PreferNoSchedule taints the pod does not tolerate.
func (pl *TaintToleration) Score(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, ok := state.Read(preScoreStateKey).(*preScoreState)
	if !ok {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: not found", preScoreStateKey))
	}
	return s.score(nodeInfo), nil
}

// score is Score once the state is read: by taint class when the node has
// one, from its own taints otherwise.
func (s *preScoreState) score(nodeInfo *framework.NodeInfo) int64 {
	c := s.tbl.class(nodeInfo)
	if c < 0 {
		return s.count(nodeInfo.Node.Spec.Taints)
	}
	if s.byClass[c] < 0 {
		s.byClass[c] = s.count(s.tbl.taints[c])
	}
	return s.byClass[c]
}

// count is how many PreferNoSchedule taints the tolerations leave untolerated.
func (s *preScoreState) count(taints []v1.Taint) int64 {
	var n int64
	for i := range taints {
		taint := &taints[i]
		if taint.Effect != v1.TaintEffectPreferNoSchedule {
			continue
		}
		if !corev1helpers.TolerationsTolerateTaint(logr.Discard(), s.tolerationsPreferNoSchedule, taint, false) {
			n++
		}
	}
	return n
}

// ScoreExtensions normalizes so that fewer untolerated taints score higher.
func (pl *TaintToleration) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore reverses the counts onto 0..100.
func (pl *TaintToleration) NormalizeScore(_ *framework.CycleState, _ *framework.PodInfo, scores framework.NodeScoreList) *framework.Status {
	helper.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
	return nil
}
