package disruption

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// ConditionDrifted is the NodeClaim condition drift detection keeps.
const ConditionDrifted = "Drifted"

// Drift reasons (the condition's reason).
const (
	reasonNodePoolDrifted     = "NodePoolDrifted"
	reasonRequirementsDrifted = "RequirementsDrifted"
)

// poolHashes is the NodePool hash controller: every v1 NodePool carries
// its template hash and the hash version as annotations.
func poolHashes(s *cluster.State) bool {
	changed := false
	for _, name := range cluster.SortedKeys(s.NodePools) {
		np := s.NodePools[name]
		if np.DeletionTimestamp != nil {
			continue
		}
		h := pools.NodePoolHash(np)
		if np.Annotations[pools.AnnotationNodePoolHash] == h && np.Annotations[pools.AnnotationNodePoolHashVersion] == pools.NodePoolHashVersion {
			continue
		}
		if np.Annotations == nil {
			np.Annotations = map[string]string{}
		}
		np.Annotations[pools.AnnotationNodePoolHash] = h
		np.Annotations[pools.AnnotationNodePoolHashVersion] = pools.NodePoolHashVersion
		np.ResourceVersion = s.Bump()
		changed = true
	}
	return changed
}

// markDrift is the NodeClaim drift controller for v1 pools: a launched
// NodeClaim whose hash differs from its NodePool's (same hash version), or
// whose labels no longer satisfy the pool's requirements, is Drifted;
// otherwise the condition is cleared. v1alpha5 Provisioners ran with drift
// behind a feature gate that was off, so their nodes never drift.
func markDrift(s *cluster.State, all []*pools.Pool) bool {
	changed := false
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[name]
		if nc.DeletionTimestamp != nil {
			continue
		}
		reason := ""
		np := s.NodePools[nc.Labels[scheduling.NodePoolLabelKey]]
		if p := pools.Of(all, nc.Labels); np != nil && p != nil && p.APIVersion == pools.APIVersionV1 && lifecycle.IsTrue(nc, lifecycle.ConditionLaunched) {
			reason = driftReason(np, p, nc)
		}
		var ch bool
		if reason == "" {
			ch = lifecycle.ClearCondition(nc, ConditionDrifted)
		} else if c := lifecycle.FindCondition(nc, ConditionDrifted); c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
			ch = lifecycle.SetCondition(s, nc, ConditionDrifted, metav1.ConditionTrue, reason, reason)
		}
		if ch {
			nc.ResourceVersion = s.Bump()
			changed = true
		}
	}
	return changed
}

func driftReason(np *karpv1.NodePool, p *pools.Pool, nc *karpv1.NodeClaim) string {
	poolHash, ok1 := np.Annotations[pools.AnnotationNodePoolHash]
	poolVersion, ok2 := np.Annotations[pools.AnnotationNodePoolHashVersion]
	claimHash, ok3 := nc.Annotations[pools.AnnotationNodePoolHash]
	claimVersion, ok4 := nc.Annotations[pools.AnnotationNodePoolHashVersion]
	if ok1 && ok2 && ok3 && ok4 && poolVersion == claimVersion && poolHash != claimHash {
		return reasonNodePoolDrifted
	}
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(p.Solver.Requirements...)
	if scheduling.NewLabelRequirements(nc.Labels).Compatible(reqs) != nil {
		return reasonRequirementsDrifted
	}
	return ""
}

// drift is the Drift method: drifted candidates by when they drifted,
// empty ones first; the first within budget whose pods all fit elsewhere
// (with any number of new NodeClaims) is replaced. A candidate whose pods
// would not fit gets DisruptionBlocked.
func (c *Controller) drift(s *cluster.State, cs *candidateSet) *command {
	var drifted []*candidate
	for _, cand := range cs.list(eventualClass, false) {
		if lifecycle.IsTrue(cand.claim, ConditionDrifted) {
			drifted = append(drifted, cand)
		}
	}
	if len(drifted) == 0 {
		return nil
	}
	since := func(c *candidate) time.Time {
		return lifecycle.FindCondition(c.claim, ConditionDrifted).LastTransitionTime.Time
	}
	sort.SliceStable(drifted, func(i, j int) bool { return since(drifted[i]).Before(since(drifted[j])) })
	var empty, busy []*candidate
	for _, cand := range drifted {
		if len(cand.reschedulable) == 0 {
			empty = append(empty, cand)
		} else {
			busy = append(busy, cand)
		}
	}
	budget := budgets(s, cs.all, karpv1.DisruptionReasonDrifted)
	for _, cand := range append(empty, busy...) {
		if budget[cand.pool.Name] == 0 {
			continue
		}
		sim, failed, err := c.simulate(s, cs, []*candidate{cand})
		if err != nil {
			continue
		}
		if failed != "" {
			cs.blocked(cand.claim, sentence(failed))
			continue
		}
		return &command{method: "drift", reason: karpv1.DisruptionReasonDrifted, candidates: []*candidate{cand},
			replacements: sim.Round.Results.NewNodeClaims, sim: sim}
	}
	return nil
}
