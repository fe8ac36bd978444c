package interpodaffinity

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// fastFilter holds Filter's three verdicts for every node of the snapshot
// as node sets, computed in PreFilter from the per-domain counts: a Filter
// call on a snapshot node then costs one position lookup and bit tests
// instead of two string-keyed map lookups per topology key and source. It
// answers exactly what satisfyPodAffinity, satisfyPodAntiAffinity and
// satisfyExistingPodsAntiAffinity answer for those nodes, and is dropped as
// soon as the counts change (AddPod, RemovePod, Clone); nodes outside the
// snapshot (copies, hypothetical nodes) take the map path.
type fastFilter struct {
	pos map[*framework.NodeInfo]int32
	// affinityKeys: nodes carrying every required affinity term's key;
	// affinityExist: nodes whose domain of every term holds a matching pod.
	affinityKeys, affinityExist helper.NodeSet
	// selfMatch: no matching pod anywhere and the pod matches its own terms.
	selfMatch bool
	// antiBlocked and existingBlocked: nodes in a domain holding a pod that
	// the incoming pod's anti-affinity, or whose anti-affinity, rejects
	// (nil: none).
	antiBlocked, existingBlocked helper.NodeSet
}

// buildFastFilter computes the node sets over x's nodes, which must be the
// nodes PreFilter was given. It returns nil when the counts are not in their
// shared form.
func buildFastFilter(s *preFilterState, x *helper.ClassDomainIndex) *fastFilter {
	for _, c := range []*lazyCounts{s.existingAntiAffinityCounts, s.affinityCounts, s.antiAffinityCounts} {
		if c.overlay != nil {
			return nil
		}
	}
	n := x.NumNodes()
	f := &fastFilter{pos: x.Positions()}
	if len(s.requiredAffinity) > 0 {
		for i := range s.requiredAffinity {
			key := s.requiredAffinity[i].TopologyKey
			holders, exist := helper.NewNodeSet(n), helper.NewNodeSet(n)
			x.AddKeyHolders(holders, key)
			for _, src := range s.affinityCounts.sources {
				if src.key == key {
					x.AddDomains(exist, key, src.counts)
				}
			}
			if f.affinityKeys == nil {
				f.affinityKeys, f.affinityExist = holders, exist
				continue
			}
			f.affinityKeys.IntersectWith(holders)
			f.affinityExist.IntersectWith(exist)
		}
		f.selfMatch = s.affinityCounts.empty() && podMatchesAllTerms(s.requiredAffinity, s.pod, s.namespaceLabels)
	}
	f.antiBlocked = unionOfDomains(s.antiAffinityCounts, x, n)
	f.existingBlocked = unionOfDomains(s.existingAntiAffinityCounts, x, n)
	return f
}

// unionOfDomains is the set of nodes in any domain with a positive count.
func unionOfDomains(c *lazyCounts, x *helper.ClassDomainIndex, n int) helper.NodeSet {
	if len(c.sources) == 0 {
		return nil
	}
	s := helper.NewNodeSet(n)
	for _, src := range c.sources {
		x.AddDomains(s, src.key, src.counts)
	}
	return s
}

// filter is Filter's verdict for a snapshot node; ok is false for nodes
// the sets do not cover.
func (f *fastFilter) filter(ni *framework.NodeInfo) (st *framework.Status, ok bool) {
	p, ok := f.pos[ni]
	if !ok {
		return nil, false
	}
	if f.affinityKeys != nil && (!f.affinityKeys.Has(p) || (!f.affinityExist.Has(p) && !f.selfMatch)) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch), true
	}
	if f.antiBlocked != nil && f.antiBlocked.Has(p) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch), true
	}
	if f.existingBlocked != nil && f.existingBlocked.Has(p) {
		return framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch), true
	}
	return nil, true
}
