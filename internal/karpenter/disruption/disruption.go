// Package disruption is Karpenter's disruption for empty and expired
// nodes: v1 emptiness (consolidateAfter, the Consolidatable condition,
// budgets, the 15-second validation), the v1alpha5 ttlSecondsAfterEmpty
// emptiness of its era, and expiration (docs/karpenter-disruption.md).
// Consolidation of underutilized nodes and drift come next.
package disruption

import (
	"math"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/events"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/karpenter/podutil"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioner"
)

// Timing (docs/karpenter-disruption.md).
const (
	// validationDelay is how long an emptiness command waits before it is
	// checked again and carried out.
	validationDelay = 15 * time.Second
)

// Annotation v1alpha5's node controller put on empty nodes.
const AnnotationEmptinessTimestamp = "karpenter.sh/emptiness-timestamp"

// ConditionConsolidatable is the NodeClaim condition this controller keeps.
const ConditionConsolidatable = "Consolidatable"

// Controller implements sim.Controller.
type Controller struct{}

// New returns the disruption controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return "karpenter-disruption" }

// candidate is a disruptable node with its NodeClaim and pool.
type candidate struct {
	claim *karpv1.NodeClaim
	node  *corev1.Node
	pool  *pools.Pool
}

// Sync marks empty nodes, expires old ones and removes empty ones.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	if len(s.NodeClaims) == 0 {
		return false, nil
	}
	all := pools.List(s)
	onNode := podsByNode(s)
	changed := c.trackPodEvents(s, onNode)
	changed = c.expire(s) || changed
	changed = c.legacyEmptiness(s, all, onNode) || changed
	changed = c.emptiness(s, all, onNode) || changed
	return changed, nil
}

// claimsWithNodes lists initialized NodeClaims with their nodes, by name.
func claimsWithNodes(s *cluster.State, all []*pools.Pool) []candidate {
	var out []candidate
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[name]
		if nc.DeletionTimestamp != nil || nc.Status.NodeName == "" {
			continue
		}
		n := s.Nodes[nc.Status.NodeName]
		if n == nil || n.DeletionTimestamp != nil || n.Labels[provisioner.LabelInitialized] != "true" {
			continue
		}
		out = append(out, candidate{claim: nc, node: n, pool: pools.Of(all, nc.Labels)})
	}
	return out
}

// podsByNode lists each node's pods that still run (not terminal), in
// key order; Sync builds it once, as every step asks it per node.
func podsByNode(s *cluster.State) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, key := range cluster.SortedKeys(s.Pods) {
		if p := s.Pods[key]; p.Spec.NodeName != "" && !cluster.IsTerminal(p) {
			out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p)
		}
	}
	return out
}

// reschedulable are the pods that would need a new home if the node went:
// active pods that are not DaemonSet or mirror pods.
func reschedulable(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil || podutil.OwnedByDaemonSet(p) || podutil.OwnedByNode(p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func nominated(s *cluster.State, names ...string) bool {
	for _, n := range names {
		if until, ok := s.Karpenter.Nominated[n]; ok && s.Now.Before(until) {
			return true
		}
	}
	return false
}

// trackPodEvents keeps each NodeClaim's lastPodEventTime: the last time a
// pod was bound to its node or left it.
func (c *Controller) trackPodEvents(s *cluster.State, onNode map[string][]*corev1.Pod) bool {
	changed := false
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[name]
		if nc.Status.NodeName == "" {
			continue
		}
		var uids []string
		for _, p := range onNode[nc.Status.NodeName] {
			uids = append(uids, string(p.UID))
		}
		sort.Strings(uids)
		fingerprint := strings.Join(uids, ",")
		key := "pods/" + name
		if s.Karpenter.PodSets == nil {
			s.Karpenter.PodSets = map[string]string{}
		}
		if prev, ok := s.Karpenter.PodSets[key]; ok && prev == fingerprint {
			continue
		}
		if _, seen := s.Karpenter.PodSets[key]; seen || len(uids) > 0 {
			nc.Status.LastPodEventTime = metav1.NewTime(s.Now)
			nc.ResourceVersion = s.Bump()
			changed = true
		}
		s.Karpenter.PodSets[key] = fingerprint
	}
	for key := range s.Karpenter.PodSets {
		if _, ok := s.NodeClaims[strings.TrimPrefix(key, "pods/")]; !ok {
			delete(s.Karpenter.PodSets, key)
		}
	}
	return changed
}

// expire deletes NodeClaims past creation + expireAfter, without budget or
// replacement.
func (c *Controller) expire(s *cluster.State) bool {
	changed := false
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[name]
		if nc.DeletionTimestamp != nil || nc.Spec.ExpireAfter == "" || nc.Spec.ExpireAfter == karpv1.Never {
			continue
		}
		d, err := time.ParseDuration(string(nc.Spec.ExpireAfter))
		if err != nil {
			continue
		}
		at := nc.CreationTimestamp.Add(d)
		if s.Now.Before(at) {
			s.AddTimer(cluster.Timer{At: at, Owner: c.Name(), Object: name})
			continue
		}
		deleteClaim(s, nc)
		changed = true
	}
	return changed
}

// legacyEmptiness is v1alpha5's: an initialized node of a Provisioner with
// ttlSecondsAfterEmpty gets the emptiness timestamp while it has no pods but
// DaemonSet ones and is not nominated, and is deleted once the TTL passed.
func (c *Controller) legacyEmptiness(s *cluster.State, all []*pools.Pool, onNode map[string][]*corev1.Pod) bool {
	changed := false
	for _, cand := range claimsWithNodes(s, all) {
		p := cand.pool
		if p == nil || p.TTLSecondsAfterEmpty == nil {
			continue
		}
		n := cand.node
		_, marked := n.Annotations[AnnotationEmptinessTimestamp]
		empty := len(reschedulable(onNode[n.Name])) == 0 && !nominated(s, n.Name, cand.claim.Name)
		switch {
		case empty && !marked:
			if n.Annotations == nil {
				n.Annotations = map[string]string{}
			}
			n.Annotations[AnnotationEmptinessTimestamp] = s.Now.UTC().Format(time.RFC3339)
			n.ResourceVersion = s.Bump()
			changed = true
			marked = true
		case !empty && marked:
			delete(n.Annotations, AnnotationEmptinessTimestamp)
			n.ResourceVersion = s.Bump()
			changed = true
			continue
		case !empty:
			continue
		}
		since, err := time.Parse(time.RFC3339, n.Annotations[AnnotationEmptinessTimestamp])
		if err != nil {
			continue
		}
		at := since.Add(time.Duration(*p.TTLSecondsAfterEmpty) * time.Second)
		if !s.Now.After(at) {
			s.AddTimer(cluster.Timer{At: at.Add(time.Second), Owner: c.Name(), Object: n.Name, Settling: true})
			continue
		}
		deleteClaim(s, cand.claim)
		changed = true
	}
	return changed
}

// emptiness is the v1 method: consolidatable empty nodes within budget are
// deleted together after a 15-second validation.
func (c *Controller) emptiness(s *cluster.State, all []*pools.Pool, onNode map[string][]*corev1.Pod) bool {
	changed := false
	var empty []candidate
	for _, cand := range claimsWithNodes(s, all) {
		p := cand.pool
		if p == nil || p.APIVersion != pools.APIVersionV1 || p.ConsolidateAfter == nil {
			continue
		}
		changed = c.markConsolidatable(s, cand, *p.ConsolidateAfter) || changed
		if !lifecycle.IsTrue(cand.claim, ConditionConsolidatable) || cand.node.Annotations["karpenter.sh/do-not-disrupt"] == "true" {
			continue
		}
		if len(reschedulable(onNode[cand.node.Name])) > 0 || nominated(s, cand.node.Name, cand.claim.Name) {
			continue
		}
		empty = append(empty, cand)
	}
	cmd := s.Karpenter.EmptinessCommand
	if cmd == nil {
		if len(empty) == 0 {
			return changed
		}
		allowed := budgets(s, all)
		var names []string
		for _, cand := range empty {
			if allowed[cand.pool.Name] <= 0 {
				continue
			}
			allowed[cand.pool.Name]--
			names = append(names, cand.claim.Name)
		}
		if len(names) == 0 {
			return changed
		}
		s.Karpenter.EmptinessCommand = &cluster.KarpenterCommand{NodeClaims: names, ValidateAt: s.Now.Add(validationDelay)}
		s.AddTimer(cluster.Timer{At: s.Now.Add(validationDelay), Owner: c.Name(), Settling: true})
		return true
	}
	if s.Now.Before(cmd.ValidateAt) {
		s.AddTimer(cluster.Timer{At: cmd.ValidateAt, Owner: c.Name(), Settling: true})
		return changed
	}
	s.Karpenter.EmptinessCommand = nil
	still := map[string]candidate{}
	for _, cand := range empty {
		still[cand.claim.Name] = cand
	}
	for _, name := range cmd.NodeClaims {
		if _, ok := still[name]; !ok {
			// The command no longer holds as a whole: pods arrived
			// ("abandoning empty node consolidation attempt due to pod churn").
			return true
		}
	}
	for _, name := range cmd.NodeClaims {
		disrupt(s, still[name], "empty")
	}
	return true
}

// markConsolidatable sets Consolidatable once the node has been
// initialized, and without pod events, for consolidateAfter, and clears it
// otherwise, as Karpenter's NodeClaim controller does.
func (c *Controller) markConsolidatable(s *cluster.State, cand candidate, after time.Duration) bool {
	nc := cand.claim
	var since time.Time
	if init := lifecycle.FindCondition(nc, lifecycle.ConditionInitialized); init != nil {
		since = init.LastTransitionTime.Time
	}
	if t := nc.Status.LastPodEventTime.Time; t.After(since) {
		since = t
	}
	at := since.Add(after)
	changed := false
	if s.Now.Before(at) {
		s.AddTimer(cluster.Timer{At: at, Owner: c.Name(), Object: nc.Name, Settling: true})
		changed = lifecycle.ClearCondition(nc, ConditionConsolidatable)
	} else if !lifecycle.IsTrue(nc, ConditionConsolidatable) {
		changed = lifecycle.SetCondition(s, nc, ConditionConsolidatable, metav1.ConditionTrue, ConditionConsolidatable, "")
	}
	if changed {
		nc.ResourceVersion = s.Bump()
	}
	return changed
}

// budgets is, per pool, how many nodes may be disrupted for emptiness now:
// the smallest allowance over the budgets for the reason, percentages
// rounded up, minus the nodes already disrupting.
func budgets(s *cluster.State, all []*pools.Pool) map[string]int {
	out := map[string]int{}
	for _, p := range all {
		total, disrupting := 0, 0
		for _, name := range cluster.SortedKeys(s.NodeClaims) {
			nc := s.NodeClaims[name]
			if nc.Labels[p.Solver.PoolLabel] != p.Name || !lifecycle.IsTrue(nc, lifecycle.ConditionInitialized) {
				continue
			}
			total++
			n := s.Nodes[nc.Status.NodeName]
			if nc.DeletionTimestamp != nil || n == nil || hasTaint(n, provisioner.TaintDisrupted) {
				disrupting++
			}
		}
		allowed := math.MaxInt32
		for _, b := range p.Budgets {
			if b.Schedule != nil || !appliesTo(b, karpv1.DisruptionReasonEmpty) {
				continue
			}
			v := intstr.Parse(b.Nodes)
			n, err := intstr.GetScaledValueFromIntOrPercent(&v, total, true)
			if err != nil {
				n = 0
			}
			if n < allowed {
				allowed = n
			}
		}
		if p.APIVersion != pools.APIVersionV1 {
			allowed = math.MaxInt32
		}
		out[p.Name] = max(allowed-disrupting, 0)
	}
	return out
}

func appliesTo(b karpv1.Budget, reason karpv1.DisruptionReason) bool {
	if len(b.Reasons) == 0 {
		return true
	}
	for _, r := range b.Reasons {
		if r == reason {
			return true
		}
	}
	return false
}

// disrupt carries a command out for one node: the disrupted taint, the
// events, and the NodeClaim's deletion (termination drains it).
func disrupt(s *cluster.State, cand candidate, reason string) {
	n := cand.node
	if !hasTaint(n, provisioner.TaintDisrupted) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: provisioner.TaintDisrupted, Effect: corev1.TaintEffectNoSchedule})
		n.ResourceVersion = s.Bump()
	}
	title := strings.ToUpper(reason[:1]) + reason[1:]
	events.Publish(s,
		events.Event{Regarding: cluster.Regarding("Node", "v1", n), Type: corev1.EventTypeNormal, Reason: "DisruptionTerminating",
			Message: "Disrupting Node: " + title, DedupeValues: []string{string(n.UID), reason}},
		events.Event{Regarding: cluster.Regarding("NodeClaim", karpv1.SchemeGroupVersion.String(), cand.claim), Type: corev1.EventTypeNormal,
			Reason: "DisruptionTerminating", Message: "Disrupting NodeClaim: " + title, DedupeValues: []string{string(cand.claim.UID), reason}})
	deleteClaim(s, cand.claim)
}

// deleteClaim starts a NodeClaim's deletion; its finalizer holds it while
// termination drains the node.
func deleteClaim(s *cluster.State, nc *karpv1.NodeClaim) { s.MarkDeleting(nc) }

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
