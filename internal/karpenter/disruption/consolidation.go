package disruption

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/events"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioner"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// Consolidation constants (docs/karpenter-disruption.md#consolidation).
const (
	// maxMultiCandidates is how many candidates multi-node consolidation
	// considers at most.
	maxMultiCandidates = 100
	// minSpotToSpotTypes is how many cheaper spot types a single-node
	// spot-to-spot replacement needs (feature gate off by default).
	minSpotToSpotTypes = 15
	// unconsolidatableDedupe is how long an Unconsolidatable event is not
	// repeated.
	unconsolidatableDedupe = 15 * time.Minute
)

// spotToSpotConsolidation is Karpenter's SpotToSpotConsolidation feature
// gate, off by default; berth runs with the defaults.
var spotToSpotConsolidation = false

// command is a disruption decision: its candidates, and the NodeClaims to
// launch first (none for a delete).
type command struct {
	method       string
	reason       karpv1.DisruptionReason
	candidates   []*candidate
	replacements []*provisioning.NewNodeClaim
	sim          *provisioner.Simulation
}

func (c *command) claimNames() []string {
	out := make([]string, len(c.candidates))
	for i, cand := range c.candidates {
		out[i] = cand.claim.Name
	}
	return out
}

func (c *command) replacementTypes() []string {
	if len(c.replacements) != 1 {
		return nil
	}
	var out []string
	for _, it := range c.replacements[0].InstanceTypes {
		out = append(out, it.Name)
	}
	return out
}

// unconsolidatable publishes the Unconsolidatable event on a candidate's
// node and NodeClaim.
func unconsolidatable(s *cluster.State, c *candidate, msg string) {
	events.Publish(s,
		events.Event{Regarding: cluster.Regarding("Node", "v1", c.node), Type: corev1.EventTypeNormal, Reason: "Unconsolidatable",
			Message: msg, DedupeValues: []string{string(c.node.UID)}, DedupeTimeout: unconsolidatableDedupe},
		events.Event{Regarding: claimRef(c.claim), Type: corev1.EventTypeNormal, Reason: "Unconsolidatable",
			Message: msg, DedupeValues: []string{string(c.claim.UID)}, DedupeTimeout: unconsolidatableDedupe})
}

// shouldConsolidate is consolidation's ShouldDisrupt: the candidate's
// type, capacity type and zone are known, its pool consolidates
// underutilized nodes, and it is Consolidatable.
func shouldConsolidate(s *cluster.State, c *candidate) bool {
	if c.pool.APIVersion != pools.APIVersionV1 && !consolidates(c.pool) {
		// A v1alpha5 Provisioner without consolidation.enabled: berth
		// stays silent, as its NodePool wording would not fit.
		return false
	}
	var msg string
	switch {
	case c.instanceType == nil:
		msg = fmt.Sprintf("Instance Type %q not found", c.node.Labels[corev1.LabelInstanceTypeStable])
	case c.node.Labels[scheduling.CapacityTypeLabelKey] == "":
		msg = fmt.Sprintf("Node does not have label %q", scheduling.CapacityTypeLabelKey)
	case c.node.Labels[corev1.LabelTopologyZone] == "":
		msg = fmt.Sprintf("Node does not have label %q", corev1.LabelTopologyZone)
	case c.pool.ConsolidateAfter == nil:
		msg = fmt.Sprintf("NodePool %q has consolidation disabled", c.pool.Name)
	case c.pool.ConsolidationPolicy != karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized:
		msg = fmt.Sprintf("NodePool %q has non-empty consolidation disabled", c.pool.Name)
	}
	if msg != "" {
		unconsolidatable(s, c, msg)
		return false
	}
	return consolidatable(c)
}

// simulate is SimulateScheduling for some candidates: their currently
// reschedulable pods and those of deleting nodes, with the pending pods,
// against the cluster without them. It returns the non-pending pods that
// would not schedule, as Karpenter words them ("" if all do).
func (c *Controller) simulate(s *cluster.State, cs *candidateSet, cands []*candidate) (*provisioner.Simulation, string, error) {
	without := map[string]bool{}
	var moved []*corev1.Pod
	for _, cand := range cands {
		without[cand.node.Name], without[cand.claim.Name] = true, true
		for _, p := range cand.reschedulable {
			if cs.limits.currentlyReschedulable(p) {
				moved = append(moved, p)
			}
		}
	}
	fromDeleting := map[string]bool{}
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[name]
		n := s.Nodes[nc.Status.NodeName]
		if n == nil || without[n.Name] || (nc.DeletionTimestamp == nil && n.DeletionTimestamp == nil && !hasTaint(n, lifecycle.DisruptedTaintKey)) {
			continue
		}
		for _, p := range reschedulable(cs.onNode[n.Name]) {
			fromDeleting[cluster.Key(p.Namespace, p.Name)] = true
			moved = append(moved, p)
		}
	}
	sim, err := provisioner.Simulate(s, c.catalog, without, moved)
	if err != nil {
		return nil, "", err
	}
	failed := map[string]string{}
	for key := range sim.Moved {
		where, placed := sim.Placed[key]
		switch {
		case !placed:
			msg := "no placement found"
			if sim.Round.Results != nil && sim.Round.Results.PodErrors[key] != nil {
				msg = sim.Round.Results.PodErrors[key].Error()
			}
			failed[key] = msg
		case where != nil && !where.Initialized && !fromDeleting[key]:
			var parts []string
			if where.NodeClaimName != "" {
				parts = append(parts, "nodeclaim/"+where.NodeClaimName)
			}
			if where.NodeName != "" {
				parts = append(parts, "node/"+where.NodeName)
			}
			failed[key] = "would schedule against uninitialized " + strings.Join(parts, ", ")
		}
	}
	return sim, schedulingErrors(failed), nil
}

// schedulingErrors is Results.NonPendingPodSchedulingErrors, in pod key
// order (Karpenter walks a map).
func schedulingErrors(failed map[string]string) string {
	if len(failed) == 0 {
		return ""
	}
	keys := cluster.SortedKeys(failed)
	var b strings.Builder
	b.WriteString("not all pods would schedule, ")
	for i, k := range keys {
		fmt.Fprintf(&b, "%s => %s ", k, failed[k])
		if i+1 >= 5 {
			fmt.Fprintf(&b, " and %d other(s)", len(keys)-5)
			break
		}
	}
	return b.String()
}

// computeConsolidation is Karpenter's: delete when the pods fit on what
// remains, replace by one strictly cheaper NodeClaim, else nothing. Events
// explain a single candidate's no-op.
func (c *Controller) computeConsolidation(s *cluster.State, cs *candidateSet, method string, cands []*candidate) *command {
	single := len(cands) == 1
	note := func(msg string) {
		if single {
			unconsolidatable(s, cands[0], msg)
		}
	}
	sim, failed, err := c.simulate(s, cs, cands)
	if err != nil {
		return nil
	}
	if failed != "" {
		note(sentence(failed))
		return nil
	}
	cmd := &command{method: method, reason: karpv1.DisruptionReasonUnderutilized, candidates: cands, sim: sim}
	claims := sim.Round.Results.NewNodeClaims
	if len(claims) == 0 {
		return cmd
	}
	if len(claims) > 1 {
		note(fmt.Sprintf("Can't remove without creating %d candidates", len(claims)))
		return nil
	}
	price, ok := candidatePrice(cands)
	if !ok {
		return nil
	}
	repl := claims[0]
	repl.InstanceTypes = repl.InstanceTypes.OrderByPrice(repl.Requirements)
	allSpot := true
	for _, cand := range cands {
		allSpot = allSpot && cand.capacityType == scheduling.CapacityTypeSpot
	}
	ct := repl.Requirements.Get(scheduling.CapacityTypeLabelKey)
	if allSpot && ct.Has(scheduling.CapacityTypeSpot) {
		return c.spotToSpot(cmd, repl, price, note)
	}
	its, err := cheaperThan(repl, price)
	if err != nil {
		note(fmt.Sprintf("Filtering by price: %v", err))
		return nil
	}
	if len(its) == 0 {
		note("Can't replace with a cheaper node")
		return nil
	}
	repl.InstanceTypes = its
	if ct.Has(scheduling.CapacityTypeSpot) && ct.Has(scheduling.CapacityTypeOnDemand) {
		// Pinned to spot so that an ICE cannot fall back to a dearer
		// on-demand node.
		repl.Requirements.Add(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, scheduling.CapacityTypeSpot))
	}
	cmd.replacements = claims
	return cmd
}

// spotToSpot replaces spot nodes by a cheaper spot NodeClaim, when the
// feature gate allows it.
func (c *Controller) spotToSpot(cmd *command, repl *provisioning.NewNodeClaim, price float64, note func(string)) *command {
	if !spotToSpotConsolidation {
		note("SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node")
		return nil
	}
	repl.Requirements.Add(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, scheduling.CapacityTypeSpot))
	repl.InstanceTypes = repl.InstanceTypes.Compatible(repl.Requirements)
	its, err := cheaperThan(repl, price)
	if err != nil {
		note(fmt.Sprintf("Filtering by price: %v", err))
		return nil
	}
	if len(its) == 0 {
		note("Can't replace with a cheaper node")
		return nil
	}
	if len(cmd.candidates) == 1 {
		if len(its) < minSpotToSpotTypes {
			note(fmt.Sprintf("SpotToSpotConsolidation requires %d cheaper instance type options than the current candidate to consolidate, got %d",
				minSpotToSpotTypes, len(its)))
			return nil
		}
		keep := minSpotToSpotTypes
		if n, _, err := its.SatisfiesMinValues(repl.Requirements); err == nil && n > keep {
			keep = n
		}
		its = its[:min(keep, len(its))]
	}
	repl.InstanceTypes = its
	cmd.replacements = []*provisioning.NewNodeClaim{repl}
	return cmd
}

// cheaperThan keeps the replacement's types whose worst launch price is
// below price, failing when minValues can no longer be met.
func cheaperThan(repl *provisioning.NewNodeClaim, price float64) (instancetype.InstanceTypes, error) {
	var out instancetype.InstanceTypes
	for _, it := range repl.InstanceTypes {
		if it.Offerings.Available().WorstLaunchPrice(repl.Requirements) < price {
			out = append(out, it)
		}
	}
	if _, _, err := out.SatisfiesMinValues(repl.Requirements); err != nil {
		return nil, err
	}
	return out, nil
}

// candidatePrice sums what the candidates cost: each the cheapest offering
// of its type compatible with its node's labels (zone, capacity type).
func candidatePrice(cands []*candidate) (float64, bool) {
	total := 0.0
	for _, c := range cands {
		reqs := scheduling.NewLabelRequirements(c.node.Labels)
		ofs := c.instanceType.Offerings.Compatible(reqs)
		if len(ofs) == 0 {
			if reqs.Get(scheduling.CapacityTypeLabelKey).Has(scheduling.CapacityTypeReserved) {
				return 0, true
			}
			return 0, false
		}
		total += ofs.Cheapest().Price
	}
	return total, true
}

// multiNode is MultiNodeConsolidation: the longest prefix (at least two)
// of the sorted, non-empty, in-budget candidates that can go together.
func (c *Controller) multiNode(s *cluster.State, cs *candidateSet, cands []*candidate, budget map[string]int) *command {
	sortByDisruptionCost(cands)
	var usable []*candidate
	for _, cand := range cands {
		if budget[cand.pool.Name] == 0 || len(cand.reschedulable) == 0 {
			continue
		}
		usable = append(usable, cand)
		budget[cand.pool.Name]--
	}
	if len(usable) < 2 {
		return nil
	}
	lo, hi := 1, min(len(usable), maxMultiCandidates)
	if len(usable) <= maxMultiCandidates {
		hi = len(usable) - 1
	}
	var best *command
	for lo <= hi {
		mid := (lo + hi) / 2
		batch := usable[:mid+1]
		cmd := c.computeConsolidation(s, cs, "multi", batch)
		valid := cmd != nil && len(cmd.replacements) == 0
		if cmd != nil && len(cmd.replacements) == 1 {
			filterOutSameType(cmd.replacements[0], batch)
			valid = len(cmd.replacements[0].InstanceTypes) > 0
		}
		if valid {
			best, lo = cmd, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best
}

// filterOutSameType drops replacement types priced at or above the
// cheapest candidate of a type the replacement could also be, so that
// three nodes are not replaced by one of their own kind at no saving.
func filterOutSameType(repl *provisioning.NewNodeClaim, cands []*candidate) {
	prices := map[string]float64{}
	for _, c := range cands {
		ofs := c.instanceType.Offerings.Compatible(scheduling.NewLabelRequirements(c.node.Labels))
		if _, seen := prices[c.instanceType.Name]; !seen {
			prices[c.instanceType.Name] = math.MaxFloat64
		}
		if len(ofs) > 0 && ofs.Cheapest().Price < prices[c.instanceType.Name] {
			prices[c.instanceType.Name] = ofs.Cheapest().Price
		}
	}
	limit := math.MaxFloat64
	for _, it := range repl.InstanceTypes {
		if p, ok := prices[it.Name]; ok && p < limit {
			limit = p
		}
	}
	its, err := cheaperThan(repl, limit)
	if err != nil {
		its = nil
	}
	repl.InstanceTypes = its
}

// singleNode is SingleNodeConsolidation: candidates by disruption cost,
// taken round-robin across pools (by name), the first that consolidates.
func (c *Controller) singleNode(s *cluster.State, cs *candidateSet, cands []*candidate, budget map[string]int) *command {
	sortByDisruptionCost(cands)
	byPool := map[string][]*candidate{}
	var names []string
	for _, cand := range cands {
		if _, ok := byPool[cand.pool.Name]; !ok {
			names = append(names, cand.pool.Name)
		}
		byPool[cand.pool.Name] = append(byPool[cand.pool.Name], cand)
	}
	sort.Strings(names)
	var ordered []*candidate
	for i := 0; len(ordered) < len(cands); i++ {
		for _, name := range names {
			if i < len(byPool[name]) {
				ordered = append(ordered, byPool[name][i])
			}
		}
	}
	for _, cand := range ordered {
		if budget[cand.pool.Name] == 0 || len(cand.reschedulable) == 0 {
			continue
		}
		if cmd := c.computeConsolidation(s, cs, "single", []*candidate{cand}); cmd != nil {
			return cmd
		}
	}
	return nil
}

// validateConsolidation re-checks a command 15 s after it was decided:
// the same candidates are still candidates within budget and not
// nominated, and a new simulation makes the same decision, its
// replacement able to take every type planned. It returns the command to
// carry out, or nil when it no longer holds.
func (c *Controller) validateConsolidation(s *cluster.State, cs *candidateSet, planned *cluster.KarpenterCommand) *command {
	byName := map[string]*candidate{}
	for _, cand := range cs.list(gracefulClass, false) {
		byName[cand.claim.Name] = cand
	}
	budget := budgets(s, cs.all, karpv1.DisruptionReasonUnderutilized)
	var cands []*candidate
	for _, name := range planned.NodeClaims {
		cand := byName[name]
		if cand == nil || !shouldConsolidate(s, cand) || budget[cand.pool.Name] == 0 {
			return nil
		}
		budget[cand.pool.Name]--
		cands = append(cands, cand)
	}
	cmd := c.computeConsolidation(s, cs, planned.Method, cands)
	if cmd == nil || (len(cmd.replacements) == 0) != (len(planned.ReplacementTypes) == 0) {
		return nil
	}
	if len(cmd.replacements) == 1 {
		have := map[string]bool{}
		for _, it := range cmd.replacements[0].InstanceTypes {
			have[it.Name] = true
		}
		for _, name := range planned.ReplacementTypes {
			if !have[name] {
				return nil
			}
		}
		// Launch what was planned: the types decided 15 s ago.
		keep := map[string]bool{}
		for _, name := range planned.ReplacementTypes {
			keep[name] = true
		}
		var its instancetype.InstanceTypes
		for _, it := range cmd.replacements[0].InstanceTypes {
			if keep[it.Name] {
				its = append(its, it)
			}
		}
		cmd.replacements[0].InstanceTypes = its
	}
	return cmd
}
