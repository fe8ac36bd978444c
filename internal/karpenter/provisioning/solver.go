package provisioning

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// MaxInstanceTypes is how many instance types a NodeClaim lists (60 up to
// Karpenter v1.6, the behaviour berth follows).
const MaxInstanceTypes = 60

// allowWellKnown lets NodeClaims leave well-known labels undefined: the
// instance type decides them later.
var allowWellKnown = scheduling.AllowUndefinedWellKnownLabels(scheduling.AWSVocabulary)

// Input is one provisioning round.
type Input struct {
	// NodePools in any order; Solve orders them by weight, then name
	// descending. Pools without instance types are skipped.
	NodePools []*NodePool
	// Nodes are the active nodes and in-flight NodeClaims.
	Nodes   []*StateNode
	Cluster *Cluster
	// DaemonSetPods are one pod per DaemonSet (an existing pod, or one
	// built from its template), for the overhead of new nodes.
	DaemonSetPods []*corev1.Pod
	// Pods are the pods to place; each needs a unique UID.
	Pods []*corev1.Pod
	// PodVolumes are the claims of the pods to place, by UID, for the
	// existing nodes' attach limits.
	PodVolumes map[types.UID]Volumes
	// IgnorePreferences is --preference-policy=Ignore; MinValuesBestEffort
	// is --min-values-policy=BestEffort.
	IgnorePreferences   bool
	MinValuesBestEffort bool
	// HostnameSeq numbers the placeholder hostnames of new NodeClaims;
	// Karpenter's counter lives as long as its process, so the caller keeps
	// it between rounds (error messages show the placeholders).
	HostnameSeq *int64
}

// Results is what a round decided.
type Results struct {
	NewNodeClaims []*NewNodeClaim
	// ExistingNodes lists the nodes that received pods, in solve order.
	ExistingNodes []*ExistingNodeResult
	// PodErrors holds the pods that could not be placed, by pod key.
	PodErrors map[string]error
	// SkippedNodePools names pools whose requirements left no instance
	// type (event NoCompatibleInstanceTypes); MinValues tells whether
	// minValues was the reason.
	SkippedNodePools []SkippedNodePool
}

// SkippedNodePool is a pool dropped before scheduling.
type SkippedNodePool struct {
	Name      string
	MinValues bool
}

// NewNodeClaim is a NodeClaim to create.
type NewNodeClaim struct {
	NodePool *NodePool
	// Requirements are final (no placeholder hostname).
	Requirements scheduling.Requirements
	// InstanceTypes are every surviving option in solve order.
	InstanceTypes    instancetype.InstanceTypes
	Pods             []*corev1.Pod
	Requests         corev1.ResourceList
	MinValuesRelaxed bool
}

// ExistingNodeResult is an existing node with the pods it should take.
type ExistingNodeResult struct {
	Node *StateNode
	Pods []*corev1.Pod
}

// solver is one Solve's state.
type solver struct {
	in        *Input
	templates []*nodePoolTemplate
	existing  []*existingNode
	// newClaims are this round's NodeClaims in creation order; claimOrder
	// is the order they are tried in, with their pod counts.
	newClaims     []*nodeClaim
	claimOrder    []claimRef
	claimScratch  []claimRef
	remaining     map[string]corev1.ResourceList
	daemons       map[*nodePoolTemplate]corev1.ResourceList
	daemonPorts   map[*nodePoolTemplate]*hostPortUsage
	data          map[types.UID]*podData
	prefs         preferences
	topology      *topology
	hostnameSeq   *int64
	skippedByPool []SkippedNodePool
	cache         *filterCache
	limits        limitCache
	reqIDs        map[string]int
	// daemonSetPods are this solve's copies of the input's DaemonSet pods,
	// edited by daemonCompatible.
	daemonSetPods []*corev1.Pod
}

// Solve places the input's pods: existing nodes first, then NodeClaims
// made earlier in this round, then a new NodeClaim from the first pool that
// can take the pod; a pod that fits nowhere has its soft constraints
// relaxed one by one (docs/karpenter-provisioning.md#the-solve-loop).
func Solve(in *Input) (*Results, error) {
	s := &solver{in: in, remaining: map[string]corev1.ResourceList{}, daemons: map[*nodePoolTemplate]corev1.ResourceList{},
		daemonPorts: map[*nodePoolTemplate]*hostPortUsage{}, data: map[types.UID]*podData{}, hostnameSeq: in.HostnameSeq,
		cache: newFilterCache(), limits: limitCache{}, reqIDs: map[string]int{}}
	if s.hostnameSeq == nil {
		var seq int64
		s.hostnameSeq = &seq
	}
	pools := append([]*NodePool(nil), in.NodePools...)
	sort.SliceStable(pools, func(i, j int) bool {
		if pools[i].Weight != pools[j].Weight {
			return pools[i].Weight > pools[j].Weight
		}
		return pools[i].Name > pools[j].Name
	})
	for _, np := range pools {
		if np.Limits != nil {
			s.remaining[np.Name] = np.Limits.DeepCopy()
		} else {
			s.remaining[np.Name] = nil
		}
		if np.Taints != nil {
			for _, t := range np.Taints {
				if t.Effect == corev1.TaintEffectPreferNoSchedule {
					s.prefs.toleratePreferNoSchedule = true
				}
			}
		}
		if len(np.InstanceTypes) == 0 {
			continue
		}
		t := newNodePoolTemplate(np)
		its, _, err := s.cache.filterInstanceTypes(np.InstanceTypes, false, t.requirements, corev1.ResourceList{}, corev1.ResourceList{}, corev1.ResourceList{}, in.MinValuesBestEffort)
		if len(its) == 0 {
			fe, _ := err.(instanceTypeFilterError)
			s.skippedByPool = append(s.skippedByPool, SkippedNodePool{Name: np.Name, MinValues: fe.minValuesErr != nil})
			continue
		}
		t.instanceTypes = its
		s.templates = append(s.templates, t)
	}
	s.daemonSetPods = make([]*corev1.Pod, len(in.DaemonSetPods))
	for i, p := range in.DaemonSetPods {
		s.daemonSetPods[i] = p.DeepCopy()
	}
	// Two passes over the templates, overhead then host ports, on the same
	// copies: the compatibility check edits the DaemonSet pods as it goes
	// (docs/karpenter-provisioning.md#daemonset-overhead).
	for _, t := range s.templates {
		var compatible []*corev1.Pod
		for _, p := range s.daemonSetPods {
			if daemonCompatible(t, p) {
				compatible = append(compatible, p)
			}
		}
		s.daemons[t] = requestsForPods(compatible...)
	}
	for _, t := range s.templates {
		ports := newHostPortUsage()
		for _, p := range s.daemonSetPods {
			if daemonCompatible(t, p) {
				ports.add(p, hostPortsOf(p))
			}
		}
		s.daemonPorts[t] = ports
	}
	c := in.Cluster
	if c == nil {
		c = &Cluster{}
	}
	top, err := newTopology(c, pools, in.Pods, in.IgnorePreferences)
	if err != nil {
		return nil, err
	}
	s.topology = top
	s.buildExisting()

	errs := map[*corev1.Pod]error{}
	for _, p := range in.Pods {
		s.updatePodData(p)
	}
	q := newQueue(append([]*corev1.Pod(nil), in.Pods...), s.data)
	for {
		p, ok := q.pop()
		if !ok {
			break
		}
		if err := s.trySchedule(p.DeepCopy()); err != nil {
			errs[p] = err
			_ = s.topology.update(p)
			s.updatePodData(p)
			q.push(p)
			continue
		}
		delete(errs, p)
	}
	return s.results(errs), nil
}

func (s *solver) trySchedule(p *corev1.Pod) error {
	for {
		err := s.add(p)
		if err == nil {
			return nil
		}
		if !s.prefs.relax(p) {
			return err
		}
		_ = s.topology.update(p)
		s.updatePodData(p)
	}
}

func (s *solver) updatePodData(p *corev1.Pod) {
	var reqs scheduling.Requirements
	if s.in.IgnorePreferences {
		reqs = scheduling.NewStrictPodRequirements(p)
	} else {
		reqs = scheduling.NewPodRequirements(p)
	}
	strict := reqs
	if scheduling.HasPreferredNodeAffinity(p) {
		strict = scheduling.NewStrictPodRequirements(p)
	}
	// Relaxation and requeueing change a pod's constraints, never its
	// containers or overhead, so its requests are computed once.
	var requests corev1.ResourceList
	var vec requestVec
	if old, ok := s.data[p.UID]; ok {
		requests, vec = old.requests, old.vec
	} else {
		requests = requestsForPods(p)
		vec = newRequestVec(requests)
	}
	s.data[p.UID] = &podData{requests: requests, vec: vec, requirements: reqs, strictRequirements: strict,
		volumes: s.in.PodVolumes[p.UID], reqID: s.requirementsID(reqs)}
}

func (s *solver) add(p *corev1.Pod) error {
	data := s.data[p.UID]
	for _, n := range s.existing {
		// As for in-flight claims below: no error is worded for a node the
		// pod's taints or requirements already rule out.
		if !tolerated(n.Taints, p.Spec.Tolerations) || !n.requirements.IsCompatible(data.requirements) {
			continue
		}
		if reqs, err := n.canAdd(p, data); err == nil {
			n.add(p, data, reqs)
			return nil
		}
	}
	sortByPods(s.claimOrder, &s.claimScratch)
	guard := s.topology.hostGuardFor(p, data)
	for i := range s.claimOrder {
		n := s.newClaims[s.claimOrder[i].index]
		if guard.rejects(n) {
			continue
		}
		// The errors of in-flight claims are not reported: skip the
		// claims the pod cannot join before any work is worded.
		if !n.quickCheck(p, data) {
			continue
		}
		if reqs, its, err := n.canAdd(p, data, s.in.MinValuesBestEffort); err == nil {
			n.add(p, data, reqs, its)
			s.claimOrder[i].pods++
			return nil
		}
	}
	return s.addToNewNodeClaim(p, data)
}

// requirementsID numbers a pod's requirement set by its exact content
// (hostname included), 0 for an empty set.
func (s *solver) requirementsID(reqs scheduling.Requirements) int {
	if len(reqs) == 0 {
		return 0
	}
	key := requirementsKeyWithout(reqs, "")
	id, ok := s.reqIDs[key]
	if !ok {
		id = len(s.reqIDs) + 1
		s.reqIDs[key] = id
	}
	return id
}

func (s *solver) addToNewNodeClaim(p *corev1.Pod, data *podData) error {
	var errs []error
	for _, t := range s.templates {
		its := t.instanceTypes
		if remaining := s.remaining[t.Name]; remaining != nil {
			its = s.limits.withinLimits(t, remaining)
			if len(its) == 0 {
				errs = append(errs, withValues(fmt.Errorf("all available instance types exceed limits for nodepool"), "NodePool", t.Name))
				continue
			}
		}
		*s.hostnameSeq++
		n := newNodeClaim(t, s.topology, fmt.Sprintf("hostname-placeholder-%04d", *s.hostnameSeq), s.daemons[t], s.daemonPorts[t], its, s.cache)
		reqs, its, err := n.canAdd(p, data, s.in.MinValuesBestEffort)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, key := range n.requirements.SortedKeys() {
			orig, updated := n.requirements[key].MinValues, reqs.Get(key).MinValues
			if orig != nil && updated != nil && *updated < *orig {
				n.minValuesRelaxed = true
			}
		}
		n.add(p, data, reqs, its)
		s.claimOrder = append(s.claimOrder, claimRef{pods: len(n.pods), index: len(s.newClaims)})
		s.newClaims = append(s.newClaims, n)
		if s.remaining[t.Name] != nil {
			s.remaining[t.Name] = subtractMax(s.remaining[t.Name], n.instanceTypes)
		}
		return nil
	}
	return combine(errs...)
}

// buildExisting wraps the state nodes with the DaemonSets that would still
// land on them, charges their capacity to their pool's limits, and orders
// them initialized first, then by name.
func (s *solver) buildExisting() {
	for _, n := range s.in.Nodes {
		var daemons []*corev1.Pod
		nodeReqs := scheduling.NewLabelRequirements(n.Labels)
		for _, p := range s.daemonSetPods {
			if tolerates(n.Taints, p.Spec.Tolerations) != nil {
				continue
			}
			if nodeReqs.Compatible(scheduling.NewStrictPodRequirements(p)) != nil {
				continue
			}
			daemons = append(daemons, p)
		}
		s.existing = append(s.existing, newExistingNode(n, s.topology, daemons))
		if rem, ok := s.remaining[s.poolOf(n)]; ok && rem != nil {
			s.remaining[s.poolOf(n)] = subtract(rem, n.Capacity)
		}
	}
	sort.SliceStable(s.existing, func(i, j int) bool {
		a, b := s.existing[i], s.existing[j]
		if a.Initialized != b.Initialized {
			return a.Initialized
		}
		return a.Name < b.Name
	})
}

// daemonCompatible tells whether a DaemonSet's pod would run on the
// pool's nodes: it tolerates the pool's taints (PreferNoSchedule always),
// and one of its required node-affinity terms fits the pool. Like
// Karpenter it edits the pod it is given: the PreferNoSchedule toleration
// stays, and so do the removed leading terms, for the later templates and
// the existing nodes (docs/karpenter-provisioning.md#daemonset-overhead).
func daemonCompatible(t *nodePoolTemplate, pod *corev1.Pod) bool {
	toleratePreferNoScheduleTaints(pod)
	if tolerates(t.Taints, pod.Spec.Tolerations) != nil {
		return false
	}
	for {
		if t.requirements.IsCompatible(scheduling.NewStrictPodRequirements(pod), allowWellKnown) {
			return true
		}
		if !removeRequiredNodeAffinityTerm(pod) {
			return false
		}
	}
}

// subtractMax charges a new NodeClaim to its pool's limits as if it became
// its largest instance type.
func subtractMax(remaining corev1.ResourceList, its instancetype.InstanceTypes) corev1.ResourceList {
	if len(its) == 0 {
		return remaining
	}
	lists := make([]corev1.ResourceList, len(its))
	for i, it := range its {
		lists[i] = it.Capacity
	}
	largest := maxResources(lists...)
	out := corev1.ResourceList{}
	for name, q := range remaining {
		c := q.DeepCopy()
		c.Sub(largest[name])
		out[name] = c
	}
	return out
}

// filterByRemainingResources drops instance types whose capacity exceeds
// what is left of any limited resource.
func filterByRemainingResources(its instancetype.InstanceTypes, remaining corev1.ResourceList) instancetype.InstanceTypes {
	var out instancetype.InstanceTypes
	for _, it := range its {
		ok := true
		for name, left := range remaining {
			if c := it.Capacity[name]; c.Cmp(left) > 0 {
				ok = false
			}
		}
		if ok {
			out = append(out, it)
		}
	}
	return out
}

// results collects the round's outcome; pod errors are keyed by pod key.
func (s *solver) results(errs map[*corev1.Pod]error) *Results {
	r := &Results{PodErrors: map[string]error{}, SkippedNodePools: s.skippedByPool}
	for p, err := range errs {
		r.PodErrors[p.Namespace+"/"+p.Name] = err
	}
	for _, ref := range s.claimOrder {
		n := s.newClaims[ref.index]
		n.finalize()
		r.NewNodeClaims = append(r.NewNodeClaims, &NewNodeClaim{NodePool: n.template.NodePool, Requirements: n.requirements,
			InstanceTypes: n.instanceTypes, Pods: n.pods, Requests: n.requests, MinValuesRelaxed: n.minValuesRelaxed})
	}
	for _, n := range s.existing {
		if len(n.pods) > 0 {
			r.ExistingNodes = append(r.ExistingNodes, &ExistingNodeResult{Node: n.StateNode, Pods: n.pods})
		}
	}
	return r
}

// poolOf names the pool a node belongs to, by either pool label.
func (s *solver) poolOf(n *StateNode) string {
	for _, np := range s.in.NodePools {
		if v, ok := n.Labels[np.poolLabel()]; ok && v == np.Name {
			return np.Name
		}
	}
	return ""
}
