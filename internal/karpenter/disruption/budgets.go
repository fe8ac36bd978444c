package disruption

import (
	"fmt"
	"math"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllerutil"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/events"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/karpenter/pools"
)

// budgetActive tells whether a budget applies at now: one without a
// schedule always does; a scheduled one does from each cron hit (UTC) for
// its duration (docs/karpenter-disruption.md#budgets). An invalid
// schedule is an error, which blocks the pool as Karpenter's
// MustGetAllowedDisruptions does.
func budgetActive(b karpv1.Budget, now time.Time) (bool, error) {
	if b.Schedule == nil && b.Duration == nil {
		return true, nil
	}
	sched, err := parseSchedule(b)
	if err != nil {
		return false, err
	}
	d, err := budgetDuration(b)
	if err != nil {
		return false, err
	}
	next := sched.Next(now.UTC().Add(-d))
	return !next.After(now.UTC()), nil
}

func parseSchedule(b karpv1.Budget) (cron.Schedule, error) {
	spec := ""
	if b.Schedule != nil {
		spec = *b.Schedule
	}
	sched, err := cron.ParseStandard("TZ=UTC " + spec)
	if err != nil {
		return nil, fmt.Errorf("invariant violated, invalid cron, %w", err)
	}
	return sched, nil
}

func budgetDuration(b karpv1.Budget) (time.Duration, error) {
	if b.Duration == nil {
		return 0, nil
	}
	return time.ParseDuration(string(*b.Duration))
}

// budgetChange is the next instant after now at which a scheduled budget
// starts or stops applying (zero if none), so a pass is due then.
func budgetChange(b karpv1.Budget, now time.Time) time.Time {
	if b.Schedule == nil {
		return time.Time{}
	}
	sched, err := parseSchedule(b)
	if err != nil {
		return time.Time{}
	}
	d, err := budgetDuration(b)
	if err != nil {
		return time.Time{}
	}
	start := sched.Next(now.UTC())
	// The window that began last (if still open) ends at its start + d.
	if last := sched.Next(now.UTC().Add(-d)); !last.After(now.UTC()) {
		if end := last.Add(d); end.After(now) && end.Before(start) {
			return end
		}
	}
	return start
}

// allowedByBudgets is MustGetAllowedDisruptions: the smallest allowance
// of the active budgets that apply to the reason (no reasons, or listing
// it), percentages of numNodes rounded up; unlimited when none applies,
// zero when any budget is invalid.
func allowedByBudgets(budgets []karpv1.Budget, now time.Time, numNodes int, reason karpv1.DisruptionReason) int {
	allowed := math.MaxInt32
	for _, b := range budgets {
		active, err := budgetActive(b, now)
		if err != nil {
			return 0
		}
		val := math.MaxInt32
		if active {
			v := intstr.Parse(b.Nodes)
			n, err := intstr.GetScaledValueFromIntOrPercent(&v, numNodes, true)
			if err != nil {
				return 0
			}
			val = n
		}
		if len(b.Reasons) == 0 || appliesTo(b, reason) {
			allowed = min(allowed, val)
		}
	}
	return allowed
}

func appliesTo(b karpv1.Budget, reason karpv1.DisruptionReason) bool {
	for _, r := range b.Reasons {
		if r == reason {
			return true
		}
	}
	return false
}

// budgets is BuildDisruptionBudgetMapping: per pool, how many more nodes
// may be disrupted for the reason now. The nodes counted are the pool's
// initialized NodeClaims whose instance is not terminating; those whose
// node is not Ready or that are being deleted or carry the disrupted taint
// are already disrupting. A pool with nodes and no allowance publishes
// DisruptionBlocked. v1alpha5 Provisioners had no budgets: unlimited.
func budgets(s *cluster.State, all []*pools.Pool, reason karpv1.DisruptionReason) map[string]int {
	out := map[string]int{}
	total, disrupting := map[string]int{}, map[string]int{}
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[name]
		p := pools.Of(all, nc.Labels)
		if p == nil || !lifecycle.IsTrue(nc, lifecycle.ConditionInitialized) || lifecycle.IsTrue(nc, lifecycle.ConditionInstanceTerminating) {
			continue
		}
		total[p.Name]++
		n := s.Nodes[nc.Status.NodeName]
		if nc.DeletionTimestamp != nil || n == nil || n.DeletionTimestamp != nil || hasTaint(n, lifecycle.DisruptedTaintKey) || !nodeReady(n) {
			disrupting[p.Name]++
		}
	}
	for _, p := range all {
		if p.APIVersion != pools.APIVersionV1 {
			out[p.Name] = math.MaxInt32
			continue
		}
		allowed := allowedByBudgets(p.Budgets, s.Now, total[p.Name], reason)
		out[p.Name] = max(allowed-disrupting[p.Name], 0)
		if total[p.Name] != 0 && allowed == 0 {
			events.Publish(s, events.Event{Regarding: poolRef(p), Type: corev1.EventTypeNormal, Reason: "DisruptionBlocked",
				Message:      fmt.Sprintf("No allowed disruptions for disruption reason %s due to blocking budget", reason),
				DedupeValues: []string{string(p.UID), string(reason)}, DedupeTimeout: time.Minute})
		}
		for _, b := range p.Budgets {
			if at := budgetChange(b, s.Now); !at.IsZero() {
				controllerutil.AddTimerOnce(s, cluster.Timer{At: at, Owner: Name, Object: "budget/" + p.Name})
			}
		}
	}
	return out
}

// nodeReady is the node's Ready condition; a node that reports none (as
// berth's kubelet may not have written yet) counts as ready.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return true
}

func poolRef(p *pools.Pool) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: p.Kind, APIVersion: p.APIVersion, Name: p.Name, UID: p.UID}
}
