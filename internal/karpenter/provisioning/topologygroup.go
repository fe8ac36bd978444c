package provisioning

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// topologyType is the kind of constraint a group tracks.
type topologyType byte

const (
	topologySpread topologyType = iota
	topologyPodAffinity
	topologyPodAntiAffinity
)

func (t topologyType) String() string {
	switch t {
	case topologySpread:
		return "topology spread"
	case topologyPodAffinity:
		return "pod affinity"
	case topologyPodAntiAffinity:
		return "pod anti-affinity"
	}
	return ""
}

// topologyGroup is one distinct constraint (key, type, namespaces,
// selector, skew, node filter) shared by every pod that declares it, with
// the number of matching pods per domain
// (docs/karpenter-provisioning.md#topology).
type topologyGroup struct {
	key        string
	typ        topologyType
	maxSkew    int32
	minDomains *int32
	namespaces sets.Set[string]
	selector   labels.Selector
	// rawSelector is kept for counting: a nil selector lists every pod of
	// the namespaces while it selects none of the pods being scheduled.
	rawSelector  *metav1.LabelSelector
	nodeFilter   nodeFilter
	owners       sets.Set[types.UID]
	domains      map[string]int32
	emptyDomains sets.Set[string]
	// id is the group's identity (Karpenter hashes the same fields).
	id string
	// order is the group's place in its topology list (creation order).
	order int
}

func newTopologyGroup(typ topologyType, key string, pod *corev1.Pod, namespaces sets.Set[string], selector *metav1.LabelSelector,
	maxSkew int32, minDomains *int32, taintPolicy, affinityPolicy *corev1.NodeInclusionPolicy) *topologyGroup {
	var filter nodeFilter
	if typ == topologySpread {
		taints := corev1.NodeInclusionPolicyIgnore
		if taintPolicy != nil {
			taints = *taintPolicy
		}
		affinity := corev1.NodeInclusionPolicyHonor
		if affinityPolicy != nil {
			affinity = *affinityPolicy
		}
		filter = makeNodeFilter(pod, taints, affinity)
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		sel = labels.Nothing()
	}
	tg := &topologyGroup{key: key, typ: typ, maxSkew: maxSkew, minDomains: minDomains, namespaces: namespaces,
		selector: sel, rawSelector: selector, nodeFilter: filter, owners: sets.New[types.UID](),
		domains: map[string]int32{}, emptyDomains: sets.New[string]()}
	tg.id = tg.identity()
	return tg
}

// addPoolDomains registers the domains the pools can create for the
// group's first owner. It runs only for a group not seen before: a pod
// whose group already exists shares it as it stands, so the domain walk
// (every instance type's value for keys like instance-type) is skipped.
func (t *topologyGroup) addPoolDomains(pod *corev1.Pod, domains domainGroup) {
	domains.forEachDomain(pod, t.nodeFilter.taintPolicy, func(domain string) {
		t.domains[domain] = 0
		t.emptyDomains.Insert(domain)
	})
}

// identity canonicalises what Karpenter hashes (slices compared as sets).
func (t *topologyGroup) identity() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%d\x00%s\x00%d\x00", t.key, t.typ, strings.Join(sets.List(t.namespaces), ","), t.maxSkew)
	b.WriteString(canonicalSelector(t.rawSelector))
	b.WriteByte(0)
	b.WriteString(t.nodeFilter.identity())
	return b.String()
}

func canonicalSelector(s *metav1.LabelSelector) string {
	if s == nil {
		return "nil"
	}
	var parts []string
	for k, v := range s.MatchLabels {
		parts = append(parts, "l:"+k+"="+v)
	}
	for _, e := range s.MatchExpressions {
		vals := append([]string(nil), e.Values...)
		sort.Strings(vals)
		parts = append(parts, "e:"+e.Key+" "+string(e.Operator)+" "+strings.Join(vals, ","))
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

// sortedDomains lists the known domains in order: Karpenter walks a map
// here, berth takes the first in name order among equals.
func (t *topologyGroup) sortedDomains() []string {
	out := make([]string, 0, len(t.domains))
	for d := range t.domains {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// get returns the domains a pod may take on a node whose possible domains
// are nodeDomains.
func (t *topologyGroup) get(pod *corev1.Pod, podDomains, nodeDomains *scheduling.Requirement) *scheduling.Requirement {
	switch t.typ {
	case topologySpread:
		return t.nextDomainSpread(pod, podDomains, nodeDomains)
	case topologyPodAffinity:
		return t.nextDomainAffinity(pod, podDomains, nodeDomains)
	default:
		return t.nextDomainAntiAffinity(podDomains, nodeDomains)
	}
}

func (t *topologyGroup) record(domains ...string) {
	for _, d := range domains {
		t.domains[d]++
		t.emptyDomains.Delete(d)
	}
}

func (t *topologyGroup) register(domains ...string) {
	for _, d := range domains {
		if _, ok := t.domains[d]; !ok {
			t.domains[d] = 0
			t.emptyDomains.Insert(d)
		}
	}
}

func (t *topologyGroup) selects(pod *corev1.Pod) bool {
	return t.namespaces.Has(pod.Namespace) && t.selector.Matches(labels.Set(pod.Labels))
}

func (t *topologyGroup) nextDomainSpread(pod *corev1.Pod, podDomains, nodeDomains *scheduling.Requirement) *scheduling.Requirement {
	choices := t.spreadChoices(pod, podDomains, nodeDomains)
	if len(choices) == 0 {
		return scheduling.NewRequirement(t.key, corev1.NodeSelectorOpDoesNotExist)
	}
	return scheduling.NewRequirement(t.key, corev1.NodeSelectorOpIn, choices[0])
}

// spreadChoices lists, in name order, the domains a spread may pick on a
// node whose possible domains are nodeDomains: those within maxSkew of the
// minimum that share the lowest count. Karpenter takes whichever of them
// its map walk meets first; more than one is a tie
// (docs/karpenter-provisioning.md#topology).
func (t *topologyGroup) spreadChoices(pod *corev1.Pod, podDomains, nodeDomains *scheduling.Requirement) []string {
	min := t.domainMinCount(podDomains)
	self := t.selects(pod)
	if t.key == corev1.LabelHostname && len(nodeDomains.Values()) == 1 {
		host := nodeDomains.Values()[0]
		count := t.domains[host]
		if self {
			count++
		}
		if count <= t.maxSkew {
			return []string{host}
		}
		return nil
	}
	var choices []string
	minCount := int32(math.MaxInt32)
	consider := func(domain string, count int32) {
		if self {
			count++
		}
		if count-min > t.maxSkew || count > minCount {
			return
		}
		if count < minCount {
			choices, minCount = choices[:0], count
		}
		choices = append(choices, domain)
	}
	if nodeDomains.Operator() == corev1.NodeSelectorOpIn {
		for _, d := range nodeDomains.Values() {
			if count, ok := t.domains[d]; ok {
				consider(d, count)
			}
		}
	} else {
		for _, d := range t.sortedDomains() {
			if nodeDomains.Has(d) {
				consider(d, t.domains[d])
			}
		}
	}
	return choices
}

// domainMinCount is the smallest count among the domains the pod may use,
// 0 for hostname (a new node is always possible) and when fewer than
// minDomains are eligible.
func (t *topologyGroup) domainMinCount(domains *scheduling.Requirement) int32 {
	if t.key == corev1.LabelHostname {
		return 0
	}
	min := int32(math.MaxInt32)
	var eligible int32
	for d, count := range t.domains {
		if domains.Has(d) {
			eligible++
			if count < min {
				min = count
			}
		}
	}
	if t.minDomains != nil && eligible < *t.minDomains {
		min = 0
	}
	return min
}

func (t *topologyGroup) nextDomainAffinity(pod *corev1.Pod, podDomains, nodeDomains *scheduling.Requirement) *scheduling.Requirement {
	options := scheduling.NewRequirement(t.key, corev1.NodeSelectorOpDoesNotExist)
	if t.key == corev1.LabelHostname && len(nodeDomains.Values()) == 1 {
		host := nodeDomains.Values()[0]
		if !podDomains.Has(host) {
			return options
		}
		if t.domains[host] > 0 {
			options.Insert(host)
			return options
		}
		if t.selects(pod) && (len(t.domains) == t.emptyDomains.Len() || !t.anyCompatiblePodDomain(podDomains)) {
			options.Insert(host)
		}
		return options
	}
	if nodeDomains.Operator() == corev1.NodeSelectorOpIn {
		for _, d := range nodeDomains.Values() {
			if count, ok := t.domains[d]; podDomains.Has(d) && ok && count > 0 {
				options.Insert(d)
			}
		}
	} else {
		for _, d := range t.sortedDomains() {
			if podDomains.Has(d) && t.domains[d] > 0 && nodeDomains.Has(d) {
				options.Insert(d)
			}
		}
	}
	if options.Len() != 0 {
		return options
	}
	// No domain has a matching pod yet: a pod that selects itself may
	// start one, preferring a domain the node already allows.
	if t.selects(pod) && (len(t.domains) == t.emptyDomains.Len() || !t.anyCompatiblePodDomain(podDomains)) {
		both := podDomains.Intersection(nodeDomains)
		domains := t.sortedDomains()
		for _, d := range domains {
			if both.Has(d) {
				options.Insert(d)
				break
			}
		}
		for _, d := range domains {
			if podDomains.Has(d) {
				options.Insert(d)
				break
			}
		}
	}
	return options
}

func (t *topologyGroup) anyCompatiblePodDomain(podDomains *scheduling.Requirement) bool {
	for d, count := range t.domains {
		if podDomains.Has(d) && count > 0 {
			return true
		}
	}
	return false
}

func (t *topologyGroup) nextDomainAntiAffinity(podDomains, nodeDomains *scheduling.Requirement) *scheduling.Requirement {
	options := scheduling.NewRequirement(t.key, corev1.NodeSelectorOpDoesNotExist)
	if t.key == corev1.LabelHostname && len(nodeDomains.Values()) == 1 {
		host := nodeDomains.Values()[0]
		if t.domains[host] == 0 {
			options.Insert(host)
		}
		return options
	}
	if nodeDomains.Operator() == corev1.NodeSelectorOpIn && nodeDomains.Len() < t.emptyDomains.Len() {
		for _, d := range nodeDomains.Values() {
			if t.emptyDomains.Has(d) && podDomains.Has(d) {
				options.Insert(d)
			}
		}
		return options
	}
	for _, d := range sets.List(t.emptyDomains) {
		if nodeDomains.Has(d) && podDomains.Has(d) {
			options.Insert(d)
		}
	}
	return options
}

// countsString prints the domain counts as Karpenter's error does: sorted,
// at most 25, then "and N other(s)".
func (t *topologyGroup) countsString() string {
	var b strings.Builder
	domains := t.sortedDomains()
	n := 0
	for _, d := range domains {
		n++
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d + ": " + strconv.Itoa(int(t.domains[d])))
		if n >= 25 {
			break
		}
	}
	if n < len(domains) {
		fmt.Fprintf(&b, " and %d other(s)", len(domains)-n)
	}
	return b.String()
}
