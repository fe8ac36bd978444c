package provisioning

import (
	corev1 "k8s.io/api/core/v1"
)

// poolDomains is every value the pools can produce for one topology key,
// with the taint sets of the pools that produce it. Only the keys the
// pods' constraints use are ever needed (a zone, the hostname), so each is
// built on first use rather than every key of every instance type up front
// (docs/karpenter-provisioning.md#speed-without-different-answers).
func (t *topology) poolDomains(key string) domainGroup {
	g, ok := t.domainGroups[key]
	if !ok {
		g = buildDomainGroup(t.pools, key)
		t.domainGroups[key] = g
	}
	return g
}

// buildDomainGroup collects the key's values a NodePool can produce: its
// requirements and labels combined with each instance type's, plus the In
// values of the pool itself. Pools, and types within a pool, are walked in
// order: a domain's taint sets depend on the order that reaches it.
func buildDomainGroup(pools []*NodePool, key string) domainGroup {
	g := domainGroup{}
	for _, np := range pools {
		base, inBase := np.poolRequirements()[key]
		var baseValues []string
		if inBase {
			baseValues = base.Values()
		}
		for _, it := range np.InstanceTypes {
			var values []string
			// As the pool's requirements with the type's added: a key
			// both define intersects.
			switch r, ok := it.Requirements[key]; {
			case ok && inBase:
				values = r.Intersection(base).Values()
			case ok:
				values = r.Values()
			default:
				values = baseValues
			}
			for _, v := range values {
				g.insert(v, np.Taints...)
			}
		}
		if inBase && base.Operator() == corev1.NodeSelectorOpIn {
			for _, v := range baseValues {
				g.insert(v, np.Taints...)
			}
		}
	}
	return g
}
