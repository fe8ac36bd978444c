// Package podtopologyspread is kube-scheduler's PodTopologySpread plugin:
// DoNotSchedule constraints filter nodes by skew, ScheduleAnyway constraints
// (or the system defaults) score them.
package podtopologyspread

import (
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Name is the plugin's name in the profile and in messages.
const Name = "PodTopologySpread"

// SystemDefaultConstraints apply to pods without constraints of their own
// (DefaultingType System); their selector comes from helper.DefaultSelector.
var SystemDefaultConstraints = []v1.TopologySpreadConstraint{
	{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
}

// Plugin implements PreFilter (with extensions), Filter, PreScore and Score.
type Plugin struct {
	handle             framework.Handle
	defaultConstraints []v1.TopologySpreadConstraint
	// systemDefaulted relaxes "node must carry every topology key" when scoring
	// with the system defaults, so nodes without a zone still spread by hostname.
	systemDefaulted bool

	// mu guards classes, the per-node pod class cache used when counting.
	mu      sync.Mutex
	classes *helper.PodClassIndex
	// index counts pods per class and domain over the snapshot (PreFilter).
	index *helper.ClassDomainIndex
	// selections counts selected pods per node for scoring (shapes.go).
	selections *selections
	// lastPreScore is the cycle state PreScore wrote last and its state,
	// so that Score finds it without a map read (fastscore.go).
	lastPreScore atomic.Pointer[preScoreMemo]
	// defaults caches the system-default selectors (defaults.go).
	defaults defaultSelectors
	// pairs is PreScore's raw score table for a hostname and zone pair
	// (pairscore.go), guarded by mu.
	pairs pairTable
}

var (
	_ framework.PreFilterPlugin     = (*Plugin)(nil)
	_ framework.PreFilterExtensions = (*Plugin)(nil)
	_ framework.FilterPlugin        = (*Plugin)(nil)
	_ framework.PreScorePlugin      = (*Plugin)(nil)
	_ framework.ScorePlugin         = (*Plugin)(nil)
	_ framework.ScoreExtensions     = (*Plugin)(nil)
)

// New returns the plugin as the default profile configures it (system defaults).
func New(h framework.Handle) *Plugin {
	return &Plugin{handle: h, defaultConstraints: SystemDefaultConstraints, systemDefaulted: true, classes: helper.NewPodClassIndex(), index: helper.NewClassDomainIndex()}
}

// NewWithDefaults returns the plugin with explicit cluster-level default
// constraints (DefaultingType List); nil means no defaulting at all.
func NewWithDefaults(h framework.Handle, defaults []v1.TopologySpreadConstraint) *Plugin {
	return &Plugin{handle: h, defaultConstraints: defaults, classes: helper.NewPodClassIndex(), index: helper.NewClassDomainIndex()}
}

// Name implements framework.Plugin.
func (pl *Plugin) Name() string { return Name }

// constraint is a TopologySpreadConstraint with defaults applied and its
// selector parsed (matchLabelKeys already merged in).
type constraint struct {
	MaxSkew            int32
	TopologyKey        string
	Selector           labels.Selector
	MinDomains         int32
	NodeAffinityPolicy v1.NodeInclusionPolicy
	NodeTaintsPolicy   v1.NodeInclusionPolicy
}

// discard is the logger the component-helpers taint matcher wants.
var discard = logr.Discard()

// matchNodeInclusionPolicies says whether node takes part in the constraint's
// counting: Honor nodeAffinityPolicy requires the pod's nodeSelector and
// required node affinity to match, Honor nodeTaintsPolicy requires the pod to
// tolerate the node's NoSchedule/NoExecute taints.
func (c *constraint) matchNodeInclusionPolicies(pod *v1.Pod, node *v1.Node, required nodeaffinity.RequiredNodeAffinity) bool {
	if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor {
		// Parse errors count as "no match", as upstream ignores them here.
		if ok, _ := required.Match(node); !ok {
			return false
		}
	}
	return c.matchNodeTaintsPolicy(pod, node)
}

// matchNodeTaintsPolicy is the taints half of matchNodeInclusionPolicies.
func (c *constraint) matchNodeTaintsPolicy(pod *v1.Pod, node *v1.Node) bool {
	if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor && len(node.Spec.Taints) > 0 {
		if _, untolerated := v1helper.FindMatchingUntoleratedTaint(discard, node.Spec.Taints, pod.Spec.Tolerations, helper.DoNotScheduleTaints, false); untolerated {
			return false
		}
	}
	return true
}

// filterConstraints converts the constraints with the given action.
func filterConstraints(in []v1.TopologySpreadConstraint, podLabels map[string]string, action v1.UnsatisfiableConstraintAction) ([]constraint, error) {
	var out []constraint
	for i := range in {
		c := &in[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		if len(c.MatchLabelKeys) > 0 {
			matchLabels := make(labels.Set)
			for _, key := range c.MatchLabelKeys {
				if v, ok := podLabels[key]; ok {
					matchLabels[key] = v
				}
			}
			if len(matchLabels) > 0 {
				selector = mergeLabelSetWithSelector(matchLabels, selector)
			}
		}
		tc := constraint{
			MaxSkew:            c.MaxSkew,
			TopologyKey:        c.TopologyKey,
			Selector:           selector,
			MinDomains:         1,
			NodeAffinityPolicy: v1.NodeInclusionPolicyHonor,
			NodeTaintsPolicy:   v1.NodeInclusionPolicyIgnore,
		}
		if c.MinDomains != nil {
			tc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			tc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			tc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		out = append(out, tc)
	}
	return out, nil
}

// mergeLabelSetWithSelector ANDs the label set into the selector. A selector
// that matches nothing stays as it is.
func mergeLabelSetWithSelector(set labels.Set, s labels.Selector) labels.Selector {
	merged := labels.SelectorFromSet(set)
	reqs, ok := s.Requirements()
	if !ok {
		return s
	}
	for _, r := range reqs {
		merged = merged.Add(r)
	}
	return merged
}

// buildDefaultConstraints applies the cluster defaults with the given action,
// selecting the pods of the pod's Services and controller. No owners, no constraints.
func (pl *Plugin) buildDefaultConstraints(pod *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]constraint, error) {
	cs, err := filterConstraints(pl.defaultConstraints, pod.Labels, action)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	selector := pl.defaultSelector(pod)
	if selector.Empty() {
		return nil, nil
	}
	for i := range cs {
		cs[i].Selector = selector
	}
	return cs, nil
}

// constraintsFor returns the pod's own constraints with the given action, or
// the defaults when the pod has none at all.
func (pl *Plugin) constraintsFor(pod *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]constraint, error) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return filterConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, action)
	}
	return pl.buildDefaultConstraints(pod, action)
}

// nodeHasAllKeys reports whether the node carries every constraint's topology key.
func nodeHasAllKeys(nodeLabels map[string]string, cs []constraint) bool {
	for i := range cs {
		if _, ok := nodeLabels[cs[i].TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// countPodsMatchSelector counts pods in namespace ns, not terminating, that the
// selector matches. An empty selector counts nothing.
func countPodsMatchSelector(pods []*framework.PodInfo, selector labels.Selector, ns string) int {
	if selector.Empty() {
		return 0
	}
	n := 0
	for _, p := range pods {
		if p.Pod.DeletionTimestamp != nil || p.Pod.Namespace != ns {
			continue
		}
		if selector.Matches(labels.Set(p.Pod.Labels)) {
			n++
		}
	}
	return n
}

// counter counts, per node, the pods a constraint selects, evaluating the
// selector once per pod class per cycle.
type counter struct {
	classes *helper.PodClassIndex
	memos   []*helper.ClassMemo
}

// newCounter must be called with pl.mu held, and used only while it is held.
func (pl *Plugin) newCounter(cs []constraint, ns string, numNodes int) *counter {
	pl.classes.BeginCycle(numNodes)
	c := &counter{classes: pl.classes, memos: make([]*helper.ClassMemo, len(cs))}
	for i := range cs {
		sel := cs[i].Selector
		empty := sel.Empty()
		c.memos[i] = helper.NewClassMemo(pl.classes, func(pc *helper.PodClass) bool {
			return !empty && !pc.Terminating && pc.Namespace == ns && sel.Matches(pc.Labels)
		})
	}
	return c
}

// count is countPodsMatchSelector(ni.Pods, constraint i) via the class cache.
func (c *counter) count(i int, ni *framework.NodeInfo) int {
	n := 0
	for _, cc := range c.classes.Counts(ni) {
		if c.memos[i].Has(cc.Class) {
			n += int(cc.Count)
		}
	}
	return n
}
