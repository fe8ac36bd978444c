package provisioning

import (
	corev1 "k8s.io/api/core/v1"
)

// hostGuard answers, for one pod and without building requirements,
// whether a hostname-keyed topology constraint already rules out an
// in-flight NodeClaim. A NodeClaim's hostname is a single placeholder, so
// for such a constraint the topology check reduces to one count per claim
// (docs/karpenter-provisioning.md#speed-without-different-answers): an
// anti-affinity group (the pod's own, or a running or pending pod's
// required term that selects it) rejects a claim whose hostname already
// counts a matching pod, and a hostname spread rejects a claim where adding
// the pod would exceed maxSkew. canAdd reaches the same verdict with the
// worded error, which nobody reads for in-flight claims; the guard only
// lets the solver skip the claims it would reject, so decisions are
// unchanged.
type hostGuard struct {
	checks []hostCheck
	// off is set when the pod constrains the hostname itself: the claim's
	// hostname domain is then not simply its placeholder.
	off bool
}

// hostCheck rejects a claim whose hostname count exceeds limit.
type hostCheck struct {
	group *topologyGroup
	limit int32
}

// hostGuardFor collects the pod's hostname constraints as canAdd's
// topology.matching would find them. Taints and requirements play no part:
// anti-affinity groups have no node filter, and the pod's own groups apply
// wherever it goes. The topology does not change while the solver walks
// the claims for one pod, so the guard holds for that walk.
func (t *topology) hostGuardFor(p *corev1.Pod, data *podData) hostGuard {
	if data.requirements.Has(corev1.LabelHostname) {
		return hostGuard{off: true}
	}
	var g hostGuard
	for _, tg := range t.ownedBy(p.UID) {
		if tg.key != corev1.LabelHostname {
			continue
		}
		switch tg.typ {
		case topologyPodAntiAffinity:
			g.checks = append(g.checks, hostCheck{group: tg, limit: 0})
		case topologySpread:
			limit := tg.maxSkew
			if tg.selects(p) {
				limit--
			}
			g.checks = append(g.checks, hostCheck{group: tg, limit: limit})
		}
	}
	for _, tg := range t.selectingInverse(p) {
		if tg.key == corev1.LabelHostname && tg.nodeFilter.matchesAll() {
			g.checks = append(g.checks, hostCheck{group: tg, limit: 0})
		}
	}
	return g
}

// rejects tells whether the claim is ruled out. Its hostname requirement
// must be In [placeholder] as newNodeClaim made it (hostPlain, kept by
// nodeClaim.add); anything else is left to canAdd.
func (g hostGuard) rejects(n *nodeClaim) bool {
	if g.off || len(g.checks) == 0 {
		return false
	}
	if !n.hostPlain {
		return false
	}
	for _, c := range g.checks {
		if c.group.domains[n.hostname] > c.limit {
			return true
		}
	}
	return false
}

// matchesAll tells whether the filter counts every node (neither policy
// is Honor), as for affinity and anti-affinity groups.
func (f nodeFilter) matchesAll() bool {
	return f.affinityPolicy != corev1.NodeInclusionPolicyHonor && f.taintPolicy != corev1.NodeInclusionPolicyHonor
}
