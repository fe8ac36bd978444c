// Package disruption is Karpenter's disruption controller: the
// Consolidatable and Drifted conditions, emptiness, multi- and single-node
// consolidation, drift, budgets and the orchestration queue that launches
// replacements before it deletes what they replace, plus expiration and
// the v1alpha5 ttlSecondsAfterEmpty emptiness of its era
// (docs/karpenter-disruption.md).
package disruption

import (
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioner"
)

// Timing (docs/karpenter-disruption.md).
const (
	// validationDelay is how long an emptiness or consolidation command
	// waits before it is checked again and carried out.
	validationDelay = 15 * time.Second
	// pollingPeriod is how often the disruption methods run.
	pollingPeriod = 10 * time.Second
)

// Annotation v1alpha5's node controller put on empty nodes.
const AnnotationEmptinessTimestamp = "karpenter.sh/emptiness-timestamp"

// ConditionConsolidatable is the NodeClaim condition this controller keeps.
const ConditionConsolidatable = "Consolidatable"

// Name is the controller's name.
const Name = "karpenter-disruption"

// Controller implements sim.Controller.
type Controller struct {
	catalog *pools.Catalog
}

// New returns the disruption controller over the instance-type catalog
// the provisioner uses (nil: a private one).
func New(catalog *pools.Catalog) *Controller {
	return &Controller{catalog: pools.SharedOrNew(catalog)}
}

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name }

// Sync keeps the conditions, carries commands forward and runs the
// methods in v1.6's order: emptiness, drift, multi-node and single-node
// consolidation, stopping at the first that decides something.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	changed := poolHashes(s)
	if len(s.NodeClaims) == 0 && len(s.Karpenter.Disrupting) == 0 {
		return changed, nil
	}
	all := pools.List(s)
	onNode := podsByNode(s)
	changed = c.trackPodEvents(s, onNode) || changed
	changed = markDrift(s, all) || changed
	for _, cand := range claimsWithNodes(s, all) {
		if consolidates(cand.pool) && cand.pool.APIVersion == pools.APIVersionV1 {
			changed = c.markConsolidatable(s, cand, *cand.pool.ConsolidateAfter) || changed
		}
	}
	changed = c.expire(s) || changed
	changed = c.legacyEmptiness(s, all, onNode) || changed
	changed = c.progress(s) || changed
	cs := newCandidateSet(s, all, c.catalog, onNode)
	changed = c.emptiness(s, cs) || changed
	changed = c.consolidate(s, cs) || changed
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

func nominated(s *cluster.State, names ...string) bool {
	for _, n := range names {
		if until, ok := s.Karpenter.Nominated[n]; ok && s.Now.Before(until) {
			return true
		}
	}
	return false
}

// trackPodEvents keeps each NodeClaim's lastPodEventTime: the last time a
// pod was bound to its node, started terminating or left it.
func (c *Controller) trackPodEvents(s *cluster.State, onNode map[string][]*corev1.Pod) bool {
	changed := false
	for _, name := range cluster.SortedKeys(s.NodeClaims) {
		nc := s.NodeClaims[name]
		if nc.Status.NodeName == "" {
			continue
		}
		var uids []string
		for _, p := range onNode[nc.Status.NodeName] {
			// A pod turning Terminating is a pod event too (podevents'
			// predicate), as is its removal.
			if p.DeletionTimestamp != nil {
				uids = append(uids, string(p.UID)+"-terminating")
				continue
			}
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
		s.MarkDeleting(nc)
		changed = true
	}
	return changed
}

// nillableDuration parses "720h"-style durations; "Never" and "" give nil.
func nillableDuration(v karpv1.NillableDuration) *time.Duration {
	if v == "" || v == karpv1.Never {
		return nil
	}
	d, err := time.ParseDuration(string(v))
	if err != nil {
		return nil
	}
	return &d
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
		s.MarkDeleting(cand.claim)
		changed = true
	}
	return changed
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

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
