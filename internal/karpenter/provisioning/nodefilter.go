package provisioning

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// nodeFilter decides which nodes a spread constraint counts: with the
// affinity policy Honor a node must satisfy the pod's nodeSelector and one
// of its required node-affinity terms; with the taint policy Honor the pod
// must tolerate the node's taints.
type nodeFilter struct {
	requirements   []scheduling.Requirements
	taintPolicy    corev1.NodeInclusionPolicy
	affinityPolicy corev1.NodeInclusionPolicy
	tolerations    []corev1.Toleration
}

func makeNodeFilter(p *corev1.Pod, taintPolicy, affinityPolicy corev1.NodeInclusionPolicy) nodeFilter {
	selector := scheduling.NewLabelRequirements(p.Spec.NodeSelector)
	f := nodeFilter{taintPolicy: taintPolicy, affinityPolicy: affinityPolicy, tolerations: p.Spec.Tolerations}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		f.requirements = []scheduling.Requirements{selector}
		return f
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		r := scheduling.NewRequirements(selector.Values()...)
		r.Add(scheduling.NewNodeSelectorRequirements(term.MatchExpressions...).Values()...)
		f.requirements = append(f.requirements, r)
	}
	return f
}

// matches takes the callers' compatibility options but, as Karpenter's
// filter does, does not hand them on: a new NodeClaim whose requirements
// leave a well-known label such as the zone undefined does not match a
// filter that names it, so a pod placed there is not counted by that
// spread (docs/karpenter-provisioning.md#topology).
func (f nodeFilter) matches(taints []corev1.Taint, reqs scheduling.Requirements, _ ...scheduling.CompatibilityOption) bool {
	if f.affinityPolicy == corev1.NodeInclusionPolicyHonor && !f.matchesRequirements(reqs) {
		return false
	}
	if f.taintPolicy == corev1.NodeInclusionPolicyHonor && !tolerated(taints, f.tolerations) {
		return false
	}
	return true
}

func (f nodeFilter) matchesRequirements(reqs scheduling.Requirements) bool {
	if len(f.requirements) == 0 {
		return true
	}
	for _, r := range f.requirements {
		if reqs.Compatible(r) == nil {
			return true
		}
	}
	return false
}

// identity canonicalises the filter as Karpenter's group hash sees it:
// of each requirement only its key and minValues (the hash cannot see a
// requirement's values), so pods whose node affinity differs only in values
// share one group, with the first owner's filter
// (docs/karpenter-provisioning.md#topology).
func (f nodeFilter) identity() string {
	var terms []string
	for _, r := range f.requirements {
		var keys []string
		for _, key := range r.SortedKeys() {
			k := key
			if mv := r[key].MinValues; mv != nil {
				k += fmt.Sprintf("#%d", *mv)
			}
			keys = append(keys, k)
		}
		terms = append(terms, strings.Join(keys, ","))
	}
	sort.Strings(terms)
	var tols []string
	for _, t := range f.tolerations {
		secs := ""
		if t.TolerationSeconds != nil {
			secs = fmt.Sprint(*t.TolerationSeconds)
		}
		tols = append(tols, fmt.Sprintf("%s/%s/%s/%s/%s", t.Key, t.Operator, t.Value, t.Effect, secs))
	}
	sort.Strings(tols)
	return fmt.Sprintf("%s|%s|%s|%s", strings.Join(terms, "&"), f.taintPolicy, f.affinityPolicy, strings.Join(tols, "&"))
}

// domainGroup lists, per domain of one topology key, the taint sets of the
// NodePools that can create it; a domain reachable without taints keeps a
// single empty set.
type domainGroup map[string][][]corev1.Taint

func (g domainGroup) insert(domain string, taints ...corev1.Taint) {
	cur, ok := g[domain]
	if ok && len(cur[0]) == 0 {
		// Already reachable without taints: nothing to add.
		return
	}
	if !ok || len(taints) == 0 {
		g[domain] = [][]corev1.Taint{taints}
		return
	}
	g[domain] = append(cur, taints)
}

// forEachDomain calls f for each domain the pod could use: every domain
// when taints are ignored, else those of a pool whose taints it tolerates.
func (g domainGroup) forEachDomain(pod *corev1.Pod, taintPolicy corev1.NodeInclusionPolicy, f func(string)) {
	for domain, taintSets := range g {
		if taintPolicy == corev1.NodeInclusionPolicyIgnore {
			f(domain)
			continue
		}
		for _, taints := range taintSets {
			if tolerated(taints, pod.Spec.Tolerations) {
				f(domain)
				break
			}
		}
	}
}
