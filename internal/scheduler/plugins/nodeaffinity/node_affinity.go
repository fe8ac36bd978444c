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

// NodeAffinity is the plugin.
type NodeAffinity struct{}

// New builds the plugin (berth has no scheduler-enforced addedAffinity).
func New(framework.Handle) framework.Plugin { return &NodeAffinity{} }

func (*NodeAffinity) Name() string { return Name }

// StaticFilter marks the verdict as depending only on the node and the pod's selector and affinity.
func (*NodeAffinity) StaticFilter() {}

type preFilterState struct {
	required nodeaffinity.RequiredNodeAffinity
	// memo caches verdicts by the node's values of keys, the only labels
	// the required selector reads (nil keys: no memo, e.g. matchFields make
	// the verdict depend on the node's name). Filter runs one node at a time.
	keys []string
	memo map[string]bool
	buf  []byte
}

// newPreFilterState parses the pod's required selector and lists the label
// keys its verdict depends on.
func newPreFilterState(pod *v1.Pod) *preFilterState {
	s := &preFilterState{required: nodeaffinity.GetRequiredNodeAffinity(pod)}
	keys := sets.New[string]()
	for k := range pod.Spec.NodeSelector {
		keys.Insert(k)
	}
	if required := requiredTerms(pod); required != nil {
		for _, term := range required.NodeSelectorTerms {
			if len(term.MatchFields) > 0 {
				return s
			}
			for _, r := range term.MatchExpressions {
				keys.Insert(r.Key)
			}
		}
	}
	if keys.Has(v1.LabelHostname) {
		return s
	}
	s.keys = sets.List(keys)
	s.memo = map[string]bool{}
	return s
}

// match is s.required.Match(node), answered from the memo when it can be.
func (s *preFilterState) match(node *v1.Node) bool {
	if s.memo == nil || node == nil {
		ok, _ := s.required.Match(node)
		return ok
	}
	b := s.buf[:0]
	for _, k := range s.keys {
		if v, ok := node.Labels[k]; ok {
			b = append(b, 1)
			b = append(b, v...)
		}
		b = append(b, 0)
	}
	s.buf = b
	if ok, found := s.memo[string(b)]; found {
		return ok
	}
	ok, _ := s.required.Match(node)
	s.memo[string(b)] = ok
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
	state.Write(preFilterStateKey, newPreFilterState(pod.Pod))
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
	if !s.match(nodeInfo.Node) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
	}
	return nil
}

type preScoreState struct {
	preferred *nodeaffinity.PreferredSchedulingTerms
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
	state.Write(preScoreStateKey, &preScoreState{preferred: terms})
	return nil
}

// Score sums the weights of matching preferred terms.
func (pl *NodeAffinity) Score(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, ok := state.Read(preScoreStateKey).(*preScoreState)
	if !ok {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: not found", preScoreStateKey))
	}
	return s.preferred.Score(nodeInfo.Node), nil
}

// ScoreExtensions normalizes against the best node.
func (pl *NodeAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales onto 0..100.
func (pl *NodeAffinity) NormalizeScore(_ *framework.CycleState, _ *framework.PodInfo, scores framework.NodeScoreList) *framework.Status {
	helper.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
	return nil
}
