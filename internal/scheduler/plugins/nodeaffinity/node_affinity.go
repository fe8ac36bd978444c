// Package nodeaffinity enforces spec.nodeSelector and required node affinity
// and scores preferred node affinity.
package nodeaffinity

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Name is the plugin's name in the profile.
const Name = "NodeAffinity"

// Reasons, as upstream spells them.
const (
	ErrReasonPod      = "node(s) didn't match Pod's node affinity/selector"
	ErrReasonConflict = "pod affinity terms conflict"
)

const (
	preFilterStateKey framework.StateKey = "PreFilter" + Name
	preScoreStateKey  framework.StateKey = "PreScore" + Name
)

// NodeAffinity is the plugin. It keeps a value table of the current
// snapshot's node labels (table.go) for its compiled selectors.
type NodeAffinity struct {
	handle framework.Handle
	tbl    *nodeTable
}

// New builds the plugin (berth has no scheduler-enforced addedAffinity).
func New(h framework.Handle) framework.Plugin { return &NodeAffinity{handle: h} }

func (*NodeAffinity) Name() string { return Name }

// StaticFilter marks the verdict as depending only on the node and the pod's selector and affinity.
func (*NodeAffinity) StaticFilter() {}

type preFilterState struct {
	required nodeaffinity.RequiredNodeAffinity
	// fast answers nodes of tbl (nil: the helper's matcher answers all).
	// Its verdict caches fill in as Filter runs, one node at a time.
	tbl  *nodeTable
	fast *compiledRequired
	// rejected is the cycle's one rejection status: every rejected node
	// gets the same (immutable) reason, and the framework only tags it with
	// this plugin's name, so one object serves them all.
	rejected *framework.Status
}

// newPreFilterState parses the pod's required selector and compiles it
// over tbl when there is one.
func newPreFilterState(pod *v1.Pod, tbl *nodeTable) *preFilterState {
	s := &preFilterState{required: nodeaffinity.GetRequiredNodeAffinity(pod)}
	if tbl != nil {
		if c := compileRequired(tbl, pod); c != nil {
			s.tbl, s.fast = tbl, c
		}
	}
	return s
}

// match is s.required.Match(ni.Node), answered from the compiled selector
// when the table describes the node.
func (s *preFilterState) match(ni *framework.NodeInfo) bool {
	if s.fast != nil {
		if pos := s.tbl.position(ni); pos >= 0 {
			return s.fast.match(pos)
		}
	}
	ok, _ := s.required.Match(ni.Node)
	return ok
}

func (s *preFilterState) Clone() framework.StateData { return s }

func requiredTerms(pod *v1.Pod) *v1.NodeSelector {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

// PreFilter parses the required selector once and, when every term pins
// metadata.name, narrows Filter to those nodes.
func (pl *NodeAffinity) PreFilter(state *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	required := requiredTerms(pod.Pod)
	if required == nil && pod.Pod.Spec.NodeSelector == nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, newPreFilterState(pod.Pod, pl.table()))
	if required == nil || len(required.NodeSelectorTerms) == 0 {
		return nil, nil
	}
	// Terms are ORed: the node set is the union over terms, each term being the
	// intersection of its metadata.name In requirements. A term without one
	// allows every node.
	var names sets.Set[string]
	for _, term := range required.NodeSelectorTerms {
		var termNames sets.Set[string]
		for _, r := range term.MatchFields {
			if r.Key != metav1.ObjectNameField || r.Operator != v1.NodeSelectorOpIn {
				continue
			}
			if termNames == nil {
				termNames = sets.New(r.Values...)
			} else {
				termNames = termNames.Intersection(sets.New(r.Values...))
			}
		}
		if termNames == nil {
			return nil, nil
		}
		names = names.Union(termNames)
	}
	if len(names) == 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict)
	}
	out := make(map[string]struct{}, len(names))
	for n := range names {
		out[n] = struct{}{}
	}
	return &framework.PreFilterResult{NodeNames: out}, nil
}

// PreFilterExtensions: the verdict does not depend on other pods.
func (pl *NodeAffinity) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter checks nodeSelector and required affinity; unparsable terms never match.
func (pl *NodeAffinity) Filter(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, ok := state.Read(preFilterStateKey).(*preFilterState)
	if !ok {
		s = &preFilterState{required: nodeaffinity.GetRequiredNodeAffinity(pod.Pod)}
	}
	if !s.match(nodeInfo) {
		if s.rejected == nil {
			s.rejected = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
		}
		return s.rejected
	}
	return nil
}

type preScoreState struct {
	preferred *nodeaffinity.PreferredSchedulingTerms
	// fast scores nodes of tbl (nil: the helper scores all).
	tbl  *nodeTable
	fast *compiledPreferred
}

func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore parses the preferred terms; without any the plugin's Score is skipped.
func (pl *NodeAffinity) PreScore(state *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo) *framework.Status {
	a := pod.Pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	terms, err := nodeaffinity.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("parsing pod's preferred node affinity: %w", err))
	}
	ps := &preScoreState{preferred: terms}
	if tbl := pl.table(); tbl != nil {
		if c := compilePreferred(tbl, a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution); c != nil {
			ps.tbl, ps.fast = tbl, c
		}
	}
	state.Write(preScoreStateKey, ps)
	return nil
}

// Score sums the weights of matching preferred terms.
func (pl *NodeAffinity) Score(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, ok := state.Read(preScoreStateKey).(*preScoreState)
	if !ok {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: not found", preScoreStateKey))
	}
	return s.score(nodeInfo), nil
}

// score is Score once the state is read: through the compiled terms for
// a node of the table, through the helper otherwise.
func (s *preScoreState) score(nodeInfo *framework.NodeInfo) int64 {
	if s.fast != nil {
		if pos := s.tbl.position(nodeInfo); pos >= 0 {
			return s.fast.score(pos)
		}
	}
	return s.preferred.Score(nodeInfo.Node)
}

// ScoreExtensions normalizes against the best node.
func (pl *NodeAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales onto 0..100.
func (pl *NodeAffinity) NormalizeScore(_ *framework.CycleState, _ *framework.PodInfo, scores framework.NodeScoreList) *framework.Status {
	helper.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
	return nil
}
