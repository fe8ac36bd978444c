package disruption

import (
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/karpenter/pools"

	"github.com/berth-sim/berth/internal/cluster"
)

// consolidates tells whether a pool's nodes are consolidated at all: a v1
// NodePool whose consolidateAfter is not Never, or a v1alpha5 Provisioner
// with consolidation.enabled (its ttlSecondsAfterEmpty emptiness is
// legacyEmptiness).
func consolidates(p *pools.Pool) bool {
	if p == nil || p.ConsolidateAfter == nil {
		return false
	}
	return p.APIVersion == pools.APIVersionV1 || p.ConsolidationPolicy == karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized
}

// consolidatable is the Consolidatable gate: the condition on v1
// NodeClaims; v1alpha5 consolidation had no such delay.
func consolidatable(c *candidate) bool {
	if c.pool.APIVersion != pools.APIVersionV1 {
		return true
	}
	return lifecycle.IsTrue(c.claim, ConditionConsolidatable)
}

// emptyCandidates are Emptiness's: consolidatable candidates of
// consolidating pools without reschedulable pods.
func emptyCandidates(cs *candidateSet) []*candidate {
	var out []*candidate
	for _, cand := range cs.list(gracefulClass, false) {
		if consolidates(cand.pool) && consolidatable(cand) && len(cand.reschedulable) == 0 {
			out = append(out, cand)
		}
	}
	return out
}

// emptiness is the Emptiness method: every empty candidate within its
// pool's budget joins one command; 15 s later the command keeps those
// still empty candidates within budget (all gone: the attempt is dropped,
// "abandoning empty node consolidation attempt due to pod churn") and
// deletes them.
func (c *Controller) emptiness(s *cluster.State, cs *candidateSet) bool {
	if s.Karpenter.ConsolidationCommand != nil {
		return false
	}
	cmd := s.Karpenter.EmptinessCommand
	if cmd == nil {
		empty := emptyCandidates(cs)
		if len(empty) == 0 {
			return false
		}
		allowed := budgets(s, cs.all, karpv1.DisruptionReasonEmpty)
		var names []string
		for _, cand := range empty {
			if allowed[cand.pool.Name] <= 0 {
				continue
			}
			allowed[cand.pool.Name]--
			names = append(names, cand.claim.Name)
		}
		if len(names) == 0 {
			return false
		}
		s.Karpenter.EmptinessCommand = &cluster.KarpenterCommand{NodeClaims: names, ValidateAt: s.Now.Add(validationDelay)}
		s.AddTimer(cluster.Timer{At: s.Now.Add(validationDelay), Owner: c.Name(), Settling: true})
		return true
	}
	if s.Now.Before(cmd.ValidateAt) {
		s.AddTimer(cluster.Timer{At: cmd.ValidateAt, Owner: c.Name(), Settling: true})
		return false
	}
	s.Karpenter.EmptinessCommand = nil
	still := map[string]*candidate{}
	for _, cand := range emptyCandidates(cs) {
		still[cand.claim.Name] = cand
	}
	allowed := budgets(s, cs.all, karpv1.DisruptionReasonEmpty)
	var keep []*candidate
	for _, name := range cmd.NodeClaims {
		cand := still[name]
		if cand == nil || allowed[cand.pool.Name] <= 0 {
			continue
		}
		allowed[cand.pool.Name]--
		keep = append(keep, cand)
	}
	if len(keep) > 0 {
		c.start(s, &command{method: "empty", reason: karpv1.DisruptionReasonEmpty, candidates: keep})
	}
	return true
}
