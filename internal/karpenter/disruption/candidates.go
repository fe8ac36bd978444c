package disruption

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/events"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/karpenter/podutil"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioner"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// candidate is a node disruption may act on: its NodeClaim, Node and pool,
// its pods, and what consolidation compares (docs/karpenter-disruption.md#candidates).
type candidate struct {
	claim *karpv1.NodeClaim
	node  *corev1.Node
	pool  *pools.Pool
	// pods are the node's pods that still run; reschedulable those that
	// need a new home if it goes.
	pods          []*corev1.Pod
	reschedulable []*corev1.Pod
	// instanceType is the node's type in the pool's catalog (nil if gone).
	instanceType *instancetype.InstanceType
	capacityType string
	zone         string
	// disruptionCost orders consolidation: cheaper to disrupt first.
	disruptionCost float64
}

// Disruption classes: graceful methods respect blocking PDBs and
// do-not-disrupt pods; eventual ones (drift) ignore them on NodeClaims
// with a terminationGracePeriod.
const (
	gracefulClass = "graceful"
	eventualClass = "eventual"
)

// podBlockError is a pod-level block (do-not-disrupt, PDB) that an
// eventual method may ignore.
type podBlockError struct{ msg string }

func (e podBlockError) Error() string { return e.msg }

// validateNode is StateNode.ValidateNodeDisruptable.
func validateNode(s *cluster.State, nc *karpv1.NodeClaim, n *corev1.Node, poolLabel string) error {
	switch {
	case n == nil:
		return fmt.Errorf("nodeclaim does not have an associated node")
	case n.Labels[provisioner.LabelInitialized] != "true":
		return fmt.Errorf("node isn't initialized")
	case nc.DeletionTimestamp != nil || n.DeletionTimestamp != nil || hasTaint(n, lifecycle.DisruptedTaintKey):
		return fmt.Errorf("node is deleting or marked for deletion")
	case nominated(s, n.Name, nc.Name):
		return fmt.Errorf("node is nominated for a pending pod")
	case n.Annotations[lifecycle.DoNotDisruptAnnotation] == "true":
		return fmt.Errorf("disruption is blocked through the %q annotation", lifecycle.DoNotDisruptAnnotation)
	}
	if _, ok := n.Labels[poolLabel]; !ok {
		return fmt.Errorf("node doesn't have required label (label=%s)", poolLabel)
	}
	return nil
}

// validatePods is StateNode.ValidatePodsDisruptable: no active pod asks
// not to be disrupted, and every evictable pod's PDBs allow a disruption.
func validatePods(pods []*corev1.Pod, limits pdbLimits) error {
	for _, p := range pods {
		if active(p) && p.Annotations[lifecycle.DoNotDisruptAnnotation] == "true" {
			return podBlockError{fmt.Sprintf(`pod has "karpenter.sh/do-not-disrupt" annotation (Pod=%s/%s)`, p.Namespace, p.Name)}
		}
	}
	for _, p := range pods {
		if key, ok := limits.evictable(p, false); !ok {
			return podBlockError{fmt.Sprintf("pdb prevents pod evictions (PodDisruptionBudget=%s)", key)}
		}
	}
	return nil
}

// sentence capitalises an error for an event, as Karpenter's
// pretty.Sentence does.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// candidateSet builds the candidates of one pass, publishing
// DisruptionBlocked on each Karpenter NodeClaim that cannot be one
// (GetCandidates with NewCandidate).
type candidateSet struct {
	s       *cluster.State
	all     []*pools.Pool
	catalog *pools.Catalog
	onNode  map[string][]*corev1.Pod
	limits  pdbLimits
	// queued are the NodeClaims of commands in flight.
	queued map[string]bool
}

func newCandidateSet(s *cluster.State, all []*pools.Pool, catalog *pools.Catalog, onNode map[string][]*corev1.Pod) *candidateSet {
	cs := &candidateSet{s: s, all: all, catalog: catalog, onNode: onNode, limits: newPDBLimits(s), queued: map[string]bool{}}
	for _, cmd := range s.Karpenter.Disrupting {
		for _, name := range cmd.NodeClaims {
			cs.queued[name] = true
		}
	}
	return cs
}

// list returns the candidates for a disruption class, in NodeClaim name
// order; publish says whether blocked ones get events.
func (cs *candidateSet) list(class string, publish bool) []*candidate {
	var out []*candidate
	for _, name := range cluster.SortedKeys(cs.s.NodeClaims) {
		c, err := cs.build(cs.s.NodeClaims[name], class)
		if err != nil {
			if publish && err.Error() != "" {
				cs.blocked(cs.s.NodeClaims[name], sentence(err.Error()))
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

func (cs *candidateSet) build(nc *karpv1.NodeClaim, class string) (*candidate, error) {
	if cs.queued[nc.Name] {
		return nil, fmt.Errorf("") // already being disrupted: no event
	}
	n := cs.s.Nodes[nc.Status.NodeName]
	if nc.Status.NodeName == "" {
		n = nil
	}
	p := pools.Of(cs.all, nc.Labels)
	poolLabel := scheduling.NodePoolLabelKey
	if p != nil {
		poolLabel = p.Solver.PoolLabel
	}
	if err := validateNode(cs.s, nc, n, poolLabel); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("nodePool not found (NodePool=%s)", nc.Labels[poolLabel])
	}
	pods := cs.onNode[n.Name]
	if err := validatePods(pods, cs.limits); err != nil {
		eventual := class == eventualClass && nc.Spec.TerminationGracePeriod != nil
		if _, isPod := err.(podBlockError); !eventual || !isPod {
			return nil, err
		}
	}
	c := &candidate{claim: nc, node: n, pool: p, pods: pods, reschedulable: reschedulable(pods),
		capacityType: n.Labels[scheduling.CapacityTypeLabelKey], zone: n.Labels[corev1.LabelTopologyZone]}
	if cs.catalog != nil {
		for _, it := range cs.catalog.InstanceTypes(cs.s, p) {
			if it.Name == n.Labels[corev1.LabelInstanceTypeStable] {
				c.instanceType = it
			}
		}
	}
	c.disruptionCost = reschedulingCost(pods) * lifetimeRemaining(cs.s, nc)
	return c, nil
}

// blocked publishes DisruptionBlocked on the node (if any) and NodeClaim.
func (cs *candidateSet) blocked(nc *karpv1.NodeClaim, msg string) {
	var evs []events.Event
	if n := cs.s.Nodes[nc.Status.NodeName]; n != nil && nc.Status.NodeName != "" {
		evs = append(evs, events.Event{Regarding: cluster.Regarding("Node", "v1", n), Type: corev1.EventTypeNormal,
			Reason: "DisruptionBlocked", Message: msg, DedupeValues: []string{string(n.UID)}})
	}
	evs = append(evs, events.Event{Regarding: claimRef(nc), Type: corev1.EventTypeNormal,
		Reason: "DisruptionBlocked", Message: msg, DedupeValues: []string{string(nc.UID)}})
	events.Publish(cs.s, evs...)
}

func claimRef(nc *karpv1.NodeClaim) corev1.ObjectReference {
	return cluster.Regarding("NodeClaim", karpv1.SchemeGroupVersion.String(), nc)
}

// active is pod.IsActive: neither terminal nor terminating.
func active(p *corev1.Pod) bool { return !cluster.IsTerminal(p) && p.DeletionTimestamp == nil }

// reschedulable are the pods that would need a new home if the node went
// (pod.IsReschedulable): active pods, or terminating StatefulSet pods, that
// are not DaemonSet or mirror pods.
func reschedulable(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		ok := active(p) || (podutil.OwnedBy(p, "apps/v1", "StatefulSet") && p.DeletionTimestamp != nil && !cluster.IsTerminal(p))
		if !ok || podutil.OwnedByDaemonSet(p) || podutil.OwnedByNode(p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// evictionCost is 1, plus the pod-deletion-cost over 2^27, plus the
// priority over 2^25, clamped to [-10, 10].
func evictionCost(p *corev1.Pod) float64 {
	cost := 1.0
	if v, ok := p.Annotations[corev1.PodDeletionCost]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			cost += f / math.Pow(2, 27)
		}
	}
	if p.Spec.Priority != nil {
		cost += float64(*p.Spec.Priority) / math.Pow(2, 25)
	}
	return max(-10, min(10, cost))
}

func reschedulingCost(pods []*corev1.Pod) float64 {
	cost := 0.0
	for _, p := range pods {
		cost += evictionCost(p)
	}
	return cost
}

// lifetimeRemaining is the share of expireAfter still ahead (1 for Never).
func lifetimeRemaining(s *cluster.State, nc *karpv1.NodeClaim) float64 {
	d := nillableDuration(nc.Spec.ExpireAfter)
	if d == nil || *d <= 0 {
		return 1
	}
	left := d.Seconds() - s.Now.Sub(nc.CreationTimestamp.Time).Seconds()
	return max(0, min(1, left/d.Seconds()))
}

// sortByDisruptionCost orders consolidation candidates, cheapest first;
// ties keep NodeClaim name order.
func sortByDisruptionCost(cands []*candidate) {
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].disruptionCost < cands[j].disruptionCost })
}

// pdbLimits are the cluster's PodDisruptionBudgets as Karpenter's pdb
// package reads them.
type pdbLimits []pdbItem

type pdbItem struct {
	key                string
	namespace          string
	selector           labels.Selector
	disruptionsAllowed int32
	fullyBlocking      bool
	alwaysAllowSick    bool
}

func newPDBLimits(s *cluster.State) pdbLimits {
	var out pdbLimits
	for _, key := range cluster.SortedKeys(s.PodDisruptionBudgets) {
		pdb := s.PodDisruptionBudgets[key]
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		out = append(out, pdbItem{key: pdb.Namespace + "/" + pdb.Name, namespace: pdb.Namespace, selector: sel,
			disruptionsAllowed: pdb.Status.DisruptionsAllowed, fullyBlocking: fullyBlocking(pdb),
			alwaysAllowSick: pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow})
	}
	return out
}

// fullyBlocking PDBs (maxUnavailable 0 or 0%, minAvailable 100%) never let
// a pod go, so consolidation does not plan capacity for their pods.
func fullyBlocking(pdb *policyv1.PodDisruptionBudget) bool {
	mu, ma := pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable
	return (mu != nil && mu.Type == intstr.Int && mu.IntVal == 0) || (mu != nil && mu.Type == intstr.String && mu.StrVal == "0%") ||
		(ma != nil && ma.Type == intstr.String && ma.StrVal == "100%")
}

// evictable reports, for a pod Karpenter would evict, the first PDB that
// stops it: one with no disruptions allowed, or (fully) one that blocks
// every eviction.
func (l pdbLimits) evictable(p *corev1.Pod, fully bool) (string, bool) {
	if !lifecycleEvictable(p) {
		return "", true
	}
	for _, item := range l {
		if item.namespace != p.Namespace || !item.selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		if item.alwaysAllowSick && podNotReady(p) {
			return "", true
		}
		if (!fully && item.disruptionsAllowed == 0) || (fully && item.fullyBlocking) {
			return item.key, false
		}
	}
	return "", true
}

// currentlyReschedulable is pdb.IsCurrentlyReschedulable: a reschedulable
// pod that is not do-not-disrupt and not held by a fully blocking PDB.
func (l pdbLimits) currentlyReschedulable(p *corev1.Pod) bool {
	_, ok := l.evictable(p, true)
	return ok && p.Annotations[lifecycle.DoNotDisruptAnnotation] != "true"
}

func podNotReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse {
			return true
		}
	}
	return false
}

// lifecycleEvictable is pod.IsEvictable: active, not tolerating the
// disrupted taint, not a mirror pod, not do-not-disrupt.
func lifecycleEvictable(p *corev1.Pod) bool {
	return active(p) && !lifecycle.ToleratesDisrupted(p) && !podutil.OwnedByNode(p) &&
		p.Annotations[lifecycle.DoNotDisruptAnnotation] != "true"
}
