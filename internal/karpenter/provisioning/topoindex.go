package provisioning

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// topoIndex spares the solver a walk over every topology group for each
// (pod, claim) pair. It answers three questions the walks answered:
// which groups a pod owns, which groups select a pod (by namespace and
// labels, neither of which changes during a solve), and which groups are
// keyed by hostname. Groups are only ever appended, so a pod's selection
// is extended with the groups created since it was last asked; every list
// keeps creation order, the order the walks had, so the first violated
// constraint is still the same one
// (docs/karpenter-provisioning.md#speed-without-different-answers).
type topoIndex struct {
	owned                   map[types.UID][]*topologyGroup
	selected                map[types.UID]*podSelection
	hostGroups, hostInverse []*topologyGroup
	groupSel, inverseSel    selectorIndex
}

// selectorIndex holds groups whose selector requires one label value
// (bucketed by the smallest such key=value), and the others: a pod's first
// selection only tests the buckets of its own labels.
type selectorIndex struct {
	byLabel map[string][]*topologyGroup
	general []*topologyGroup
}

func (x *selectorIndex) add(g *topologyGroup) {
	if bucket, ok := selectorBucket(g.rawSelector); ok {
		if x.byLabel == nil {
			x.byLabel = map[string][]*topologyGroup{}
		}
		x.byLabel[bucket] = append(x.byLabel[bucket], g)
	} else {
		x.general = append(x.general, g)
	}
}

// selecting lists the indexed groups that select the pod, in creation order.
func (x *selectorIndex) selecting(p *corev1.Pod) []*topologyGroup {
	candidates := append([]*topologyGroup(nil), x.general...)
	for k, v := range p.Labels {
		candidates = append(candidates, x.byLabel[k+"="+v]...)
	}
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].order < candidates[j].order })
	var out []*topologyGroup
	for _, g := range candidates {
		if g.selects(p) {
			out = append(out, g)
		}
	}
	return out
}

// podSelection lists the groups and inverse groups that select one pod,
// among the first upTo (invUpTo) created.
type podSelection struct {
	groups, inverse []*topologyGroup
	upTo, invUpTo   int
}

func newTopoIndex() topoIndex {
	return topoIndex{owned: map[types.UID][]*topologyGroup{}, selected: map[types.UID]*podSelection{}}
}

// addGroup appends a new group.
func (t *topology) addGroup(g *topologyGroup) {
	g.order = len(t.groups)
	t.groups = append(t.groups, g)
	if g.key == corev1.LabelHostname {
		t.idx.hostGroups = append(t.idx.hostGroups, g)
	}
	t.idx.groupSel.add(g)
}

// selectorBucket is the smallest key=value a selector requires (from
// matchLabels, or an In expression with one value); a pod without that
// label value cannot be selected.
func selectorBucket(sel *metav1.LabelSelector) (string, bool) {
	if sel == nil {
		return "", false
	}
	best, ok := "", false
	consider := func(key, value string) {
		if b := key + "=" + value; !ok || b < best {
			best, ok = b, true
		}
	}
	for k, v := range sel.MatchLabels {
		consider(k, v)
	}
	for _, e := range sel.MatchExpressions {
		if e.Operator == metav1.LabelSelectorOpIn && len(e.Values) == 1 {
			consider(e.Key, e.Values[0])
		}
	}
	return best, ok
}

// addInverse appends a new inverse anti-affinity group.
func (t *topology) addInverse(g *topologyGroup) {
	g.order = len(t.inverse)
	t.inverse = append(t.inverse, g)
	if g.key == corev1.LabelHostname {
		t.idx.hostInverse = append(t.idx.hostInverse, g)
	}
	t.idx.inverseSel.add(g)
}

// dropOwner removes the pod from the groups it owns.
func (t *topology) dropOwner(uid types.UID) {
	for _, g := range t.idx.owned[uid] {
		g.owners.Delete(uid)
	}
	delete(t.idx.owned, uid)
}

// setOwned records the groups the pod now owns, once each, in creation order.
func (t *topology) setOwned(uid types.UID, groups []*topologyGroup) {
	if len(groups) == 0 {
		return
	}
	out := make([]*topologyGroup, 0, len(groups))
	seen := make(map[*topologyGroup]bool, len(groups))
	for _, g := range groups {
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	t.idx.owned[uid] = out
}

// ownedBy lists the groups the pod owns, in creation order.
func (t *topology) ownedBy(uid types.UID) []*topologyGroup { return t.idx.owned[uid] }

func (t *topology) selection(p *corev1.Pod) *podSelection {
	s, ok := t.idx.selected[p.UID]
	if !ok {
		s = &podSelection{}
		t.idx.selected[p.UID] = s
	}
	return s
}

// selecting lists the groups whose namespaces and selector take the pod.
func (t *topology) selecting(p *corev1.Pod) []*topologyGroup {
	s := t.selection(p)
	if s.upTo == 0 && len(t.groups) > 0 {
		// First ask: only the groups that can select the pod's labels.
		s.groups, s.upTo = t.idx.groupSel.selecting(p), len(t.groups)
	}
	for ; s.upTo < len(t.groups); s.upTo++ {
		if g := t.groups[s.upTo]; g.selects(p) {
			s.groups = append(s.groups, g)
		}
	}
	return s.groups
}

// selectingInverse lists the inverse groups that take the pod.
func (t *topology) selectingInverse(p *corev1.Pod) []*topologyGroup {
	s := t.selection(p)
	if s.invUpTo == 0 && len(t.inverse) > 0 {
		s.inverse, s.invUpTo = t.idx.inverseSel.selecting(p), len(t.inverse)
	}
	for ; s.invUpTo < len(t.inverse); s.invUpTo++ {
		if g := t.inverse[s.invUpTo]; g.selects(p) {
			s.inverse = append(s.inverse, g)
		}
	}
	return s.inverse
}

// hostCursor is how far a node's hostname has been registered in the
// hostname groups. Registering is idempotent (domains are never removed),
// so a claim only needs to register in the groups created since its last
// add, where Karpenter registers in all of them every time.
type hostCursor struct{ groups, inverse int }

func (t *topology) registerHost(domain string, c *hostCursor) {
	for ; c.groups < len(t.idx.hostGroups); c.groups++ {
		t.idx.hostGroups[c.groups].register(domain)
	}
	for ; c.inverse < len(t.idx.hostInverse); c.inverse++ {
		t.idx.hostInverse[c.inverse].register(domain)
	}
}
