package provisioning

import (
	"fmt"
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// topology tracks every spread, affinity and anti-affinity constraint of
// the pods being scheduled, plus the required anti-affinity of pods already
// running (inverse groups), and answers which domains a pod may take on a
// candidate node (docs/karpenter-provisioning.md#topology).
type topology struct {
	cluster           *Cluster
	ignorePreferences bool
	// groups and inverse are kept in creation order so that the first
	// violated constraint reported is always the same one.
	groups      []*topologyGroup
	groupByID   map[string]*topologyGroup
	inverse     []*topologyGroup
	inverseByID map[string]*topologyGroup
	// domainGroups are the pools' domains per topology key, built when a
	// group first needs the key (see poolDomains).
	domainGroups map[string]domainGroup
	pools        []*NodePool
	// excluded are the pods of this batch: they do not count where they
	// currently are (nowhere, or on a node being deleted).
	excluded sets.Set[types.UID]
	idx      topoIndex
}

func newTopology(c *Cluster, pools []*NodePool, pods []*corev1.Pod, ignorePreferences bool) (*topology, error) {
	t := &topology{cluster: c, ignorePreferences: ignorePreferences, groupByID: map[string]*topologyGroup{},
		inverseByID: map[string]*topologyGroup{}, domainGroups: map[string]domainGroup{}, pools: pools, excluded: sets.New[types.UID](),
		idx: newTopoIndex()}
	for _, p := range pods {
		t.excluded.Insert(p.UID)
	}
	var errs []error
	for _, p := range c.boundPods() {
		if t.excluded.Has(p.UID) || !hasRequiredPodAntiAffinity(p) {
			continue
		}
		node := c.Nodes[p.Spec.NodeName]
		if node == nil {
			continue
		}
		t.updateInverseAntiAffinity(p, node.Labels)
	}
	for _, p := range pods {
		errs = append(errs, t.update(p))
	}
	if err := combine(errs...); err != nil {
		return nil, err
	}
	return t, nil
}

// topologyError is the pod's error when no domain satisfies a constraint.
type topologyError struct {
	group                   *topologyGroup
	podDomains, nodeDomains *scheduling.Requirement
}

func (e topologyError) Error() string {
	// The missing closing parenthesis is Karpenter's.
	return fmt.Sprintf("unsatisfiable topology constraint for %s, key=%s (counts = %s, podDomains = %v, nodeDomains = %v",
		e.group.typ, e.group.key, e.group.countsString(), e.podDomains, e.nodeDomains)
}

// update (re)computes the groups a pod owns, after it was relaxed or
// first seen.
func (t *topology) update(p *corev1.Pod) error {
	t.dropOwner(p.UID)
	if (t.ignorePreferences && hasRequiredPodAntiAffinity(p)) || (!t.ignorePreferences && hasPodAntiAffinity(p)) {
		t.updateInverseAntiAffinity(p, nil)
	}
	var owned []*topologyGroup
	for _, g := range append(t.newForTopologies(p), t.newForAffinities(p)...) {
		if existing, ok := t.groupByID[g.id]; ok {
			g = existing
		} else {
			g.addPoolDomains(p, t.poolDomains(g.key))
			t.countDomains(g)
			t.groupByID[g.id] = g
			t.addGroup(g)
		}
		g.owners.Insert(p.UID)
		owned = append(owned, g)
	}
	t.setOwned(p.UID, owned)
	return nil
}

// record counts a pod placed on a node with these requirements.
func (t *topology) record(p *corev1.Pod, taints []corev1.Taint, reqs scheduling.Requirements, opts ...scheduling.CompatibilityOption) {
	for _, g := range t.selecting(p) {
		if !g.nodeFilter.matches(taints, reqs, opts...) {
			continue
		}
		domains := reqs.Get(g.key)
		if g.typ == topologyPodAntiAffinity {
			g.record(domains.Values()...)
		} else if domains.Len() == 1 {
			g.record(domains.Values()[0])
		}
	}
	for _, g := range t.inverse {
		if g.owners.Has(p.UID) {
			g.record(reqs.Get(g.key).Values()...)
		}
	}
}

// addRequirements returns the node requirements narrowed by every
// constraint that applies to the pod there, or the first that cannot be met.
// When no constraint applies it returns nodeReqs itself.
//
// Each constraint is judged against the node's own requirements and the
// answers are intersected, as Karpenter does, so a spread that picks one
// of several tied domains can pick one another constraint (a zone
// affinity, say) rules out, and the pod then fits nowhere on that node.
// Karpenter's pick is a map walk, so it lands on a domain the other
// constraints allow often enough, over the nodes and rounds a pod is
// tried on, that this is its most frequent answer. berth therefore
// settles tied spreads last, each taking the first tied domain (by name)
// that the other constraints leave open, and the first by name only when
// none is (docs/karpenter-provisioning.md#topology).
func (t *topology) addRequirements(p *corev1.Pod, taints []corev1.Taint, podReqs, nodeReqs scheduling.Requirements, opts ...scheduling.CompatibilityOption) (scheduling.Requirements, error) {
	groups := t.matching(p, taints, nodeReqs, opts...)
	if len(groups) == 0 {
		// Nothing to narrow: the requirements themselves, not a copy (the
		// callers only read the answer before changing their own set).
		return nodeReqs, nil
	}
	reqs := copyRequirements(nodeReqs)
	var tied []spreadTie
	for _, g := range groups {
		podDomains := scheduling.NewRequirement(g.key, corev1.NodeSelectorOpExists)
		if podReqs.Has(g.key) {
			podDomains = podReqs.Get(g.key)
		}
		nodeDomains := scheduling.NewRequirement(g.key, corev1.NodeSelectorOpExists)
		if nodeReqs.Has(g.key) {
			nodeDomains = nodeReqs.Get(g.key)
		}
		var domains *scheduling.Requirement
		if g.typ == topologySpread {
			choices := g.spreadChoices(p, podDomains, nodeDomains)
			if len(choices) > 1 {
				tied = append(tied, spreadTie{key: g.key, choices: choices})
				continue
			}
			domains = scheduling.NewRequirement(g.key, corev1.NodeSelectorOpDoesNotExist)
			if len(choices) == 1 {
				domains = scheduling.NewRequirement(g.key, corev1.NodeSelectorOpIn, choices[0])
			}
		} else {
			domains = g.get(p, podDomains, nodeDomains)
		}
		if domains.Len() == 0 {
			return nil, topologyError{group: g, podDomains: podDomains, nodeDomains: nodeDomains}
		}
		reqs.Add(domains)
	}
	for _, tie := range tied {
		pick := tie.choices[0]
		open := reqs.Get(tie.key)
		for _, d := range tie.choices {
			if open.Has(d) {
				pick = d
				break
			}
		}
		reqs.Add(scheduling.NewRequirement(tie.key, corev1.NodeSelectorOpIn, pick))
	}
	return reqs, nil
}

// spreadTie is a spread constraint with several equally good domains, left
// for addRequirements to settle after the other constraints.
type spreadTie struct {
	key     string
	choices []string
}

// register makes a new domain (a new NodeClaim's hostname) known.
func (t *topology) register(key, domain string) {
	groups, inverse := t.groups, t.inverse
	if key == corev1.LabelHostname {
		groups, inverse = t.idx.hostGroups, t.idx.hostInverse
	}
	for _, g := range groups {
		if g.key == key {
			g.register(domain)
		}
	}
	for _, g := range inverse {
		if g.key == key {
			g.register(domain)
		}
	}
}

func (t *topology) matching(p *corev1.Pod, taints []corev1.Taint, reqs scheduling.Requirements, opts ...scheduling.CompatibilityOption) []*topologyGroup {
	out := append([]*topologyGroup(nil), t.ownedBy(p.UID)...)
	for _, g := range t.selectingInverse(p) {
		if g.nodeFilter.matches(taints, reqs, opts...) {
			out = append(out, g)
		}
	}
	return out
}

// updateInverseAntiAffinity records a pod's required anti-affinity terms as
// groups that keep the pods they select out of its domain.
func (t *topology) updateInverseAntiAffinity(p *corev1.Pod, nodeLabels map[string]string) {
	for _, term := range p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		ns := t.namespaces(p.Namespace, term.Namespaces, term.NamespaceSelector)
		g := newTopologyGroup(topologyPodAntiAffinity, term.TopologyKey, p, ns, term.LabelSelector, math.MaxInt32, nil, nil, nil)
		if existing, ok := t.inverseByID[g.id]; ok {
			g = existing
		} else {
			g.addPoolDomains(p, t.poolDomains(g.key))
			t.inverseByID[g.id] = g
			t.addInverse(g)
		}
		if domain, ok := nodeLabels[g.key]; ok {
			g.record(domain)
		}
		g.owners.Insert(p.UID)
	}
}

// countDomains fills a new group with the matching pods already running:
// a pod's domain is its node's label (the node's name for hostname), and
// only nodes that pass the group's filter count. Nodes that pass the
// filter add their domain even when empty.
func (t *topology) countDomains(g *topologyGroup) {
	for _, name := range sortedNodeNames(t.cluster.Nodes) {
		n := t.cluster.Nodes[name]
		if !g.nodeFilter.matches(n.Spec.Taints, scheduling.NewLabelRequirements(n.Labels)) {
			continue
		}
		if domain, ok := n.Labels[g.key]; ok {
			g.register(domain)
		}
	}
	selector := listSelector(g.rawSelector)
	for _, ns := range sets.List(g.namespaces) {
		for _, p := range t.cluster.podsIn(ns) {
			if ignoredForTopology(p) || t.excluded.Has(p.UID) || !selector.Matches(labels.Set(p.Labels)) {
				continue
			}
			node := t.cluster.Nodes[p.Spec.NodeName]
			if node == nil {
				continue
			}
			domain, ok := node.Labels[g.key]
			if !ok && g.key == corev1.LabelHostname {
				domain, ok = node.Name, true
			}
			if !ok || !g.nodeFilter.matches(node.Spec.Taints, scheduling.NewLabelRequirements(node.Labels)) {
				continue
			}
			g.record(domain)
		}
	}
}

func (t *topology) newForTopologies(p *corev1.Pod) []*topologyGroup {
	var out []*topologyGroup
	for _, tsc := range p.Spec.TopologySpreadConstraints {
		if t.ignorePreferences && tsc.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		selector := tsc.LabelSelector
		if len(tsc.MatchLabelKeys) > 0 && selector != nil {
			selector = selector.DeepCopy()
			for _, key := range tsc.MatchLabelKeys {
				if v, ok := p.Labels[key]; ok {
					selector.MatchExpressions = append(selector.MatchExpressions,
						metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
				}
			}
		}
		out = append(out, newTopologyGroup(topologySpread, tsc.TopologyKey, p, sets.New(p.Namespace), selector,
			tsc.MaxSkew, tsc.MinDomains, tsc.NodeTaintsPolicy, tsc.NodeAffinityPolicy))
	}
	return out
}

// newForAffinities makes a group per pod (anti-)affinity term: required
// ones always, preferred ones while preferences are respected. Affinity
// terms come before anti-affinity terms.
func (t *topology) newForAffinities(p *corev1.Pod) []*topologyGroup {
	a := p.Spec.Affinity
	if a == nil {
		return nil
	}
	var out []*topologyGroup
	add := func(typ topologyType, terms []corev1.PodAffinityTerm) {
		for _, term := range terms {
			ns := t.namespaces(p.Namespace, term.Namespaces, term.NamespaceSelector)
			out = append(out, newTopologyGroup(typ, term.TopologyKey, p, ns, term.LabelSelector, math.MaxInt32, nil, nil, nil))
		}
	}
	weighted := func(terms []corev1.WeightedPodAffinityTerm) []corev1.PodAffinityTerm {
		if t.ignorePreferences {
			return nil
		}
		out := make([]corev1.PodAffinityTerm, len(terms))
		for i := range terms {
			out[i] = terms[i].PodAffinityTerm
		}
		return out
	}
	if a.PodAffinity != nil {
		add(topologyPodAffinity, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
		add(topologyPodAffinity, weighted(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution))
	}
	if a.PodAntiAffinity != nil {
		add(topologyPodAntiAffinity, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
		add(topologyPodAntiAffinity, weighted(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution))
	}
	return out
}

// namespaces is a term's namespace set: the pod's own when the term names
// none, else the listed ones plus those the selector picks.
func (t *topology) namespaces(own string, listed []string, selector *metav1.LabelSelector) sets.Set[string] {
	if len(listed) == 0 && selector == nil {
		return sets.New(own)
	}
	if selector == nil {
		return sets.New(listed...)
	}
	out := sets.New(listed...)
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return out
	}
	for _, ns := range t.cluster.Namespaces {
		if sel.Matches(labels.Set(ns.Labels)) {
			out.Insert(ns.Name)
		}
	}
	return out
}

// listSelector is the selector used to list pods for counting: nil lists
// everything, an invalid expression lists nothing.
func listSelector(s *metav1.LabelSelector) labels.Selector {
	sel := labels.Everything()
	if s == nil {
		return sel
	}
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r, err := labels.NewRequirement(k, selection.Equals, []string{s.MatchLabels[k]})
		if err != nil {
			return labels.Nothing()
		}
		sel = sel.Add(*r)
	}
	ops := map[metav1.LabelSelectorOperator]selection.Operator{metav1.LabelSelectorOpIn: selection.In,
		metav1.LabelSelectorOpNotIn: selection.NotIn, metav1.LabelSelectorOpExists: selection.Exists,
		metav1.LabelSelectorOpDoesNotExist: selection.DoesNotExist}
	for _, e := range s.MatchExpressions {
		r, err := labels.NewRequirement(e.Key, ops[e.Operator], e.Values)
		if err != nil {
			return labels.Nothing()
		}
		sel = sel.Add(*r)
	}
	return sel
}

func ignoredForTopology(p *corev1.Pod) bool {
	return p.Spec.NodeName == "" || cluster.IsTerminal(p) || p.DeletionTimestamp != nil
}

func hasPodAntiAffinity(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && a.PodAntiAffinity != nil &&
		(len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 0)
}

func hasRequiredPodAntiAffinity(p *corev1.Pod) bool {
	return hasPodAntiAffinity(p) && len(p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0
}

func sortedNodeNames(nodes map[string]*corev1.Node) []string {
	out := make([]string, 0, len(nodes))
	for n := range nodes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
