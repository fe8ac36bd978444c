package scaleup

import (
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Labels the AWS provider's comparator ignores when it decides whether two
// groups are similar (docs/cluster-autoscaler.md#balance-similar-node-groups).
var ignoredLabels = []string{
	corev1.LabelHostname, corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
	corev1.LabelTopologyZone, corev1.LabelTopologyRegion, "beta.kubernetes.io/fluentd-ds-ready",
	"kops.k8s.io/instancegroup",
	"alpha.eksctl.io/instance-id", "alpha.eksctl.io/nodegroup-name", "eks.amazonaws.com/nodegroup",
	"k8s.amazonaws.com/eniConfig", "lifecycle", "topology.ebs.csi.aws.com/zone",
}

// balance turns the chosen option into increases: the chosen group alone,
// or with --balance-similar-node-groups the new nodes spread over the
// groups similar to it that could take the same pods, the way
// cluster-autoscaler's balancing processor walks them, so that the split
// and its order (the order of the TriggeredScaleUp message) are the ones
// CA gives (docs/cluster-autoscaler.md#balance-similar-node-groups).
func (p *planner) balance(chosen *Option, options []Option, l *limits) []Increase {
	g := p.group(chosen.Group)
	groups := []*Group{g}
	if p.in.Options.BalanceSimilarNodeGroups {
		groups = append(groups, p.similarGroups(g)...)
	}
	_ = l
	return spread(groups, chosen.NodeCount)
}

// spread shares n new nodes among groups (the chosen one first, then its
// similar ones in input order; CA takes them in its cloud provider's
// order): groups at max drop out, n is capped by the room left, the
// groups are ordered by current size (stably: the chosen group leads its
// size), and a cursor hands out nodes one at a time, moving on while the
// group it stands on has grown past the next one and starting over from
// the first group not yet full otherwise; a full group is swapped out of
// the walk. The increases come in the walk's final order.
func spread(groups []*Group, n int) []Increase {
	type share struct {
		g        *Group
		from, to int
	}
	var walk []share
	room := 0
	for _, g := range groups {
		if g.Target >= g.MaxSize {
			continue
		}
		room += g.MaxSize - g.Target
		walk = append(walk, share{g, g.Target, g.Target})
	}
	n = min(n, room)
	sort.SliceStable(walk, func(i, j int) bool { return walk[i].from < walk[j].from })
	start, cur := 0, 0
	for n > 0 {
		s := &walk[cur]
		if s.to < s.g.MaxSize {
			s.to++
			n--
		} else {
			walk[start], walk[cur] = walk[cur], walk[start]
			start++
		}
		if cur < len(walk)-1 && walk[cur].to > walk[cur+1].to {
			cur++
		} else {
			cur = start
		}
	}
	var out []Increase
	for _, s := range walk {
		if s.to != s.from {
			out = append(out, Increase{Group: s.g.Name, From: s.from, To: s.to, Max: s.g.MaxSize})
		}
	}
	return out
}

// similarGroups are the groups similar to g that accept every pod group
// g's template accepts (they may accept more), in group order: upstream's
// ComputeSimilarNodeGroups. Groups skipped before simulation (at max
// size, in backoff, over a limit) or accepting no pod have no entry in
// p.fits and never join.
func (p *planner) similarGroups(g *Group) []*Group {
	var out []*Group
	for i := range p.in.Groups {
		o := &p.in.Groups[i]
		if o.Name == g.Name || p.fits[o.Name] == nil {
			continue
		}
		if p.similar(g, o) && acceptsAll(p.fits[o.Name], p.fits[g.Name]) {
			out = append(out, o)
		}
	}
	return out
}

// similarHeadroom is the room left in g's similar groups (similarGroups),
// with --balance-similar-node-groups: the estimator may plan that many
// more nodes for g, since balancing spreads them over those groups, as
// cluster-autoscaler's similar-node-group capacity threshold allows
// (docs/cluster-autoscaler.md#balance-similar-node-groups).
func (p *planner) similarHeadroom(g *Group, l *limits) int {
	if !p.in.Options.BalanceSimilarNodeGroups {
		return 0
	}
	_ = l
	n := 0
	for _, o := range p.similarGroups(g) {
		n += max(o.MaxSize-o.Target, 0)
	}
	return n
}

// similar is the AWS node-info comparator: equal labels apart from the
// ignored ones (or equal --balancing-label values when given), memory
// capacity within --memory-difference-ratio and other capacities equal,
// allocatable and free resources within their ratios.
func (p *planner) similar(a, b *Group) bool {
	o := p.in.Options
	na, nb := a.Template, b.Template
	if len(o.BalancingLabels) > 0 {
		for _, k := range o.BalancingLabels {
			if na.Labels[k] != nb.Labels[k] {
				return false
			}
		}
	} else {
		ignore := map[string]bool{}
		for _, k := range ignoredLabels {
			ignore[k] = true
		}
		for _, k := range o.BalancingIgnoreLabels {
			ignore[k] = true
		}
		if !sameLabels(na.Labels, nb.Labels, ignore) {
			return false
		}
	}
	ca, cb := na.Status.Capacity, nb.Status.Capacity
	if len(ca) != len(cb) {
		return false
	}
	for name, qa := range ca {
		qb, ok := cb[name]
		if !ok {
			return false
		}
		if name == corev1.ResourceMemory {
			if !within(float64(qa.Value()), float64(qb.Value()), o.MemoryDifferenceRatio) {
				return false
			}
			continue
		}
		if qa.Cmp(qb) != 0 {
			return false
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		aa, ab := na.Status.Allocatable[name], nb.Status.Allocatable[name]
		if !within(float64(aa.MilliValue()), float64(ab.MilliValue()), o.MaxAllocatableDifference) {
			return false
		}
		fa := float64(aa.MilliValue()) - podsRequest(a.TemplatePods, name)
		fb := float64(ab.MilliValue()) - podsRequest(b.TemplatePods, name)
		if !within(fa, fb, o.MaxFreeDifference) {
			return false
		}
	}
	return true
}

func sameLabels(a, b map[string]string, ignore map[string]bool) bool {
	for k, v := range a {
		if ignore[k] {
			continue
		}
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	for k := range b {
		if ignore[k] {
			continue
		}
		if _, ok := a[k]; !ok {
			return false
		}
	}
	return true
}

// within tells whether a and b differ by at most ratio of the larger.
func within(a, b, ratio float64) bool {
	larger := math.Max(a, b)
	if larger == 0 {
		return true
	}
	return math.Abs(a-b)/larger <= ratio
}

func podsRequest(pods []*corev1.Pod, name corev1.ResourceName) float64 {
	var sum float64
	for _, p := range pods {
		q := containerRequests(p)[name]
		sum += float64(q.MilliValue())
	}
	return sum
}

// acceptsAll tells whether every pod group of b is among a's.
func acceptsAll(a, b []*equivalence) bool {
	in := make(map[*equivalence]bool, len(a))
	for _, e := range a {
		in[e] = true
	}
	for _, e := range b {
		if !in[e] {
			return false
		}
	}
	return true
}
