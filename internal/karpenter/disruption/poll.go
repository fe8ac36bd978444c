package disruption

import (
	"fmt"
	"hash/fnv"
	"io"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
)

// consolidate carries a consolidation command through its validation, or
// runs a pass of the polled methods (drift, multi-node, single-node) when
// one is due: at most every 10 s, and only when the cluster changed since
// the last pass that found nothing (docs/karpenter-disruption.md#the-loop).
func (c *Controller) consolidate(s *cluster.State, cs *candidateSet) bool {
	ks := &s.Karpenter
	if planned := ks.ConsolidationCommand; planned != nil {
		if s.Now.Before(planned.ValidateAt) {
			controllerutil.AddTimerOnce(s, cluster.Timer{At: planned.ValidateAt, Owner: Name, Settling: true})
			return false
		}
		ks.ConsolidationCommand = nil
		if cmd := c.validateConsolidation(s, cs, planned); cmd != nil {
			c.start(s, cmd)
		}
		// "abandoning ... consolidation attempt due to pod churn" otherwise.
		ks.DisruptionState = ""
		return true
	}
	if ks.EmptinessCommand != nil {
		return false
	}
	fp := fingerprint(s, cs)
	if fp == ks.DisruptionState {
		return false
	}
	if due := ks.DisruptionPolledAt.Add(pollingPeriod); s.Now.Before(due) {
		controllerutil.AddTimerOnce(s, cluster.Timer{At: due, Owner: Name, Object: "poll"})
		return false
	}
	ks.DisruptionPolledAt = s.Now
	cmd := c.pass(s, cs)
	if cmd == nil {
		ks.DisruptionState = fp
		if end := nominationsEnd(s); !end.IsZero() {
			controllerutil.AddTimerOnce(s, cluster.Timer{At: end, Owner: Name, Object: "nomination"})
		}
		return false
	}
	ks.DisruptionState = ""
	if cmd.reason == karpv1.DisruptionReasonDrifted {
		c.start(s, cmd)
		return true
	}
	ks.ConsolidationCommand = &cluster.KarpenterCommand{NodeClaims: cmd.claimNames(), Method: cmd.method, Reason: string(cmd.reason),
		ReplacementTypes: cmd.replacementTypes(), ValidateAt: s.Now.Add(validationDelay)}
	controllerutil.AddTimerOnce(s, cluster.Timer{At: s.Now.Add(validationDelay), Owner: Name, Settling: true})
	return true
}

// pass runs drift, then multi-node and single-node consolidation, and
// returns the first command decided. Candidates that cannot be disrupted
// get DisruptionBlocked once per pass.
func (c *Controller) pass(s *cluster.State, cs *candidateSet) *command {
	graceful := cs.list(gracefulClass, true)
	if cmd := c.drift(s, cs); cmd != nil {
		return cmd
	}
	var cands []*candidate
	for _, cand := range graceful {
		if shouldConsolidate(s, cand) {
			cands = append(cands, cand)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	if cmd := c.multiNode(s, cs, append([]*candidate(nil), cands...), budgets(s, cs.all, karpv1.DisruptionReasonUnderutilized)); cmd != nil {
		return cmd
	}
	return c.singleNode(s, cs, cands, budgets(s, cs.all, karpv1.DisruptionReasonUnderutilized))
}

// fingerprint sums up what a pass depends on: the objects' versions, the
// live nominations and the budgets now.
func fingerprint(s *cluster.State, cs *candidateSet) string {
	h := fnv.New64a()
	write := func(kind string, keys []string, rv func(string) string) {
		for _, k := range keys {
			_, _ = io.WriteString(h, kind+"/"+k+"@"+rv(k)+";")
		}
	}
	write("node", cluster.SortedKeys(s.Nodes), func(k string) string { return s.Nodes[k].ResourceVersion })
	write("claim", cluster.SortedKeys(s.NodeClaims), func(k string) string { return s.NodeClaims[k].ResourceVersion })
	write("pod", cluster.SortedKeys(s.Pods), func(k string) string { return s.Pods[k].ResourceVersion })
	write("pool", cluster.SortedKeys(s.NodePools), func(k string) string { return s.NodePools[k].ResourceVersion })
	write("prov", cluster.SortedKeys(s.Provisioners), func(k string) string { return s.Provisioners[k].ResourceVersion })
	write("pdb", cluster.SortedKeys(s.PodDisruptionBudgets), func(k string) string { return s.PodDisruptionBudgets[k].ResourceVersion })
	for _, k := range cluster.SortedKeys(s.Karpenter.Nominated) {
		if s.Now.Before(s.Karpenter.Nominated[k]) {
			_, _ = io.WriteString(h, "nominated/"+k+";")
		}
	}
	for _, p := range cs.all {
		for _, b := range p.Budgets {
			active, _ := budgetActive(b, s.Now)
			_, _ = fmt.Fprintf(h, "budget/%s/%t;", p.Name, active)
		}
	}
	return fmt.Sprint(h.Sum64())
}

// nominationsEnd is when the first live nomination ends (zero if none):
// a pass is due then, as a nominated node becomes a candidate again.
func nominationsEnd(s *cluster.State) time.Time {
	var first time.Time
	for _, until := range s.Karpenter.Nominated {
		if s.Now.Before(until) && (first.IsZero() || until.Before(first)) {
			first = until
		}
	}
	return first
}
