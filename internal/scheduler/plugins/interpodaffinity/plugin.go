// Package interpodaffinity is kube-scheduler's InterPodAffinity plugin:
// required pod (anti-)affinity as a filter (with symmetry for existing pods'
// anti-affinity) and preferred terms plus existing pods' terms as a score.
package interpodaffinity

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Name is the plugin's name in the profile and in messages.
const Name = "InterPodAffinity"

// DefaultHardPodAffinityWeight is the default profile's HardPodAffinityWeight.
const DefaultHardPodAffinityWeight int32 = 1

// Args are the plugin arguments (InterPodAffinityArgs).
type Args struct {
	// HardPodAffinityWeight is the score an existing pod's required affinity
	// term adds when the incoming pod matches it.
	HardPodAffinityWeight int32
	// IgnorePreferredTermsOfExistingPods skips scoring when the incoming pod
	// has no preferred terms of its own.
	IgnorePreferredTermsOfExistingPods bool
}

// Plugin implements PreFilter (with extensions), Filter, PreScore and Score.
type Plugin struct {
	handle framework.Handle
	args   Args

	// mu guards the caches, which PreFilter uses across all nodes.
	mu    sync.Mutex
	index *existingIndex
}

var (
	_ framework.PreFilterPlugin     = (*Plugin)(nil)
	_ framework.PreFilterExtensions = (*Plugin)(nil)
	_ framework.FilterPlugin        = (*Plugin)(nil)
	_ framework.PreScorePlugin      = (*Plugin)(nil)
	_ framework.ScorePlugin         = (*Plugin)(nil)
	_ framework.ScoreExtensions     = (*Plugin)(nil)
)

// New returns the plugin with the default profile's arguments.
func New(h framework.Handle) *Plugin {
	return NewWithArgs(h, Args{HardPodAffinityWeight: DefaultHardPodAffinityWeight})
}

// NewWithArgs returns the plugin with explicit arguments.
func NewWithArgs(h framework.Handle, args Args) *Plugin {
	return &Plugin{handle: h, args: args, index: newExistingIndex()}
}

// Name implements framework.Plugin.
func (pl *Plugin) Name() string { return Name }

// namespaceLabels snapshots the labels of the pod's namespace (nil when the
// namespace is unknown, which upstream treats as an empty label set).
func (pl *Plugin) namespaceLabels(ns string) labels.Set {
	if n := pl.handle.Namespace(ns); n != nil {
		return labels.Merge(n.Labels, nil)
	}
	return nil
}

// resolveNamespaces returns a copy of terms in which each namespaceSelector
// has been resolved against the existing namespaces and folded into the
// namespace set, so that matching no longer needs namespace labels. The
// PodInfo's own terms are shared and must not change.
func (pl *Plugin) resolveNamespaces(terms []framework.AffinityTerm) []framework.AffinityTerm {
	if len(terms) == 0 {
		return nil
	}
	out := make([]framework.AffinityTerm, len(terms))
	copy(out, terms)
	for i := range out {
		t := &out[i]
		// Empty() is true for "{}" (every namespace), which stays a selector;
		// a selector without requirements is labels.Nothing() (no selector).
		if t.NamespaceSelector == nil || t.NamespaceSelector.Empty() {
			continue
		}
		if _, ok := t.NamespaceSelector.Requirements(); !ok {
			continue
		}
		nss := t.Namespaces.Clone()
		for _, n := range pl.handle.Namespaces() {
			if t.NamespaceSelector.Matches(labels.Set(n.Labels)) {
				nss.Insert(n.Name)
			}
		}
		t.Namespaces = nss
		t.NamespaceSelector = labels.Nothing()
	}
	return out
}

func resolveWeighted(pl *Plugin, terms []framework.WeightedAffinityTerm) []framework.WeightedAffinityTerm {
	if len(terms) == 0 {
		return nil
	}
	plain := make([]framework.AffinityTerm, len(terms))
	for i := range terms {
		plain[i] = terms[i].AffinityTerm
	}
	plain = pl.resolveNamespaces(plain)
	out := make([]framework.WeightedAffinityTerm, len(terms))
	for i := range terms {
		out[i] = framework.WeightedAffinityTerm{AffinityTerm: plain[i], Weight: terms[i].Weight}
	}
	return out
}

// topologyPair is one topology domain: a node label key and its value.
type topologyPair struct {
	key   string
	value string
}

// podMatchesAllTerms is true when pod matches every term (false for no terms).
func podMatchesAllTerms(terms []framework.AffinityTerm, pod *v1.Pod, nsLabels labels.Set) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nsLabels) {
			return false
		}
	}
	return true
}
