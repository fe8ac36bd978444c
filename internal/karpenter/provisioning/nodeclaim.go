package provisioning

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// nodePoolTemplate is a NodePool as the solver launches from it: its
// requirements (pool requirements, template labels, the nodepool and
// nodeclass labels) and the instance types that survive them.
type nodePoolTemplate struct {
	*NodePool
	requirements  scheduling.Requirements
	instanceTypes instancetype.InstanceTypes
}

func newNodePoolTemplate(np *NodePool) *nodePoolTemplate {
	t := &nodePoolTemplate{NodePool: np, requirements: np.poolRequirements()}
	t.requirements.Add(scheduling.NewLabelRequirements(np.claimLabels()).Values()...)
	return t
}

// nodeClaim is a NodeClaim being packed in this solve: its pods, its
// narrowing requirements and the instance types that still fit them all.
type nodeClaim struct {
	template      *nodePoolTemplate
	hostname      string
	requirements  scheduling.Requirements
	instanceTypes instancetype.InstanceTypes
	pods          []*corev1.Pod
	// requests are the pods' requests plus the daemon overhead.
	requests        corev1.ResourceList
	daemonResources corev1.ResourceList
	hostPorts       *hostPortUsage
	topology        *topology
	// minValuesRelaxed records the BestEffort policy lowering minValues.
	minValuesRelaxed bool
	cache            *filterCache
	// bounds are, per resource, the most and the least the remaining
	// options offer (valid while boundsValid): a pod beyond the ceiling
	// cannot join, one within the floor fits every option.
	bounds      typeBounds
	boundsValid bool
	// requestsVec is requests in integers, kept with them.
	requestsVec requestVec
	hostReg     hostCursor
	// compat memoises quickCheck's requirement verdict by the pod's
	// interned requirement set (podData.reqID): 0 unknown, 1 compatible,
	// 2 not. Cleared whenever the claim's requirements change.
	compat []uint8
	// hostPlain says the hostname requirement is still In [hostname], the
	// case hostGuard can decide.
	hostPlain bool
	// ownTypes says instanceTypes is this claim's own slice rather than
	// the pool's shared list it started from, so an unchanged list may be
	// kept as it is (the provisioner later sorts a claim's list in place).
	ownTypes bool
}

// newNodeClaim starts a NodeClaim of the pool. daemonPorts is the pool's one
// host-port table, shared, not copied: as in Karpenter, a port a pod takes
// on one new NodeClaim is then taken on every NodeClaim of that pool in this
// solve (docs/karpenter-provisioning.md#host-ports).
func newNodeClaim(t *nodePoolTemplate, top *topology, hostname string, daemon corev1.ResourceList, daemonPorts *hostPortUsage,
	its instancetype.InstanceTypes, cache *filterCache) *nodeClaim {
	reqs := scheduling.NewRequirements(t.requirements.Values()...)
	reqs.Add(scheduling.NewRequirement(corev1.LabelHostname, corev1.NodeSelectorOpIn, hostname))
	return &nodeClaim{template: t, hostname: hostname, requirements: reqs, instanceTypes: its, requests: daemon.DeepCopy(),
		daemonResources: daemon, hostPorts: daemonPorts, topology: top, cache: cache, requestsVec: newRequestVec(daemon), hostPlain: true}
}

// quickCheck rejects, without building errors, a pod that does not
// tolerate the pool's taints or whose requirements conflict with the
// claim's; canAdd would reject it too.
func (n *nodeClaim) quickCheck(pod *corev1.Pod, data *podData) bool {
	if !tolerated(n.template.Taints, pod.Spec.Tolerations) {
		return false
	}
	b := n.typeBounds()
	// Both sides exact means their integer sum is the merged list's exact
	// form; otherwise the check is skipped and canAdd decides.
	if b.ok && n.requestsVec.ok && data.vec.ok && !fitsMain(addMain(n.requestsVec.vec, data.vec.vec), b.ceiling) {
		return false
	}
	return n.compatible(data)
}

// typeBounds are the bounds of the claim's instance types, computed when
// the list changes.
func (n *nodeClaim) typeBounds() typeBounds {
	if !n.boundsValid {
		n.bounds = boundsOf(n.instanceTypes)
		// As before bounds were kept with the list: a list without exact
		// integers is looked at again on each call.
		n.boundsValid = n.bounds.ok
	}
	return n.bounds
}

// keepsAll tells, without walking the list, that every instance type of
// the claim holds its requests plus data's: both are exact, hold only the
// four common resources, and fit the least any type offers. Then
// keepFitting would keep the whole list.
func (n *nodeClaim) keepsAll(data *podData) bool {
	r, o := n.requestsVec, data.vec
	if !r.ok || !o.ok || r.vec.negative || o.vec.negative || r.vec.other != nil || o.vec.other != nil {
		return false
	}
	b := n.typeBounds()
	return b.ok && b.floorOK && fitsMain(addMain(r.vec, o.vec), b.floor)
}

// compatible is compatibleOK(n.requirements, data.requirements), memoised:
// every pod is tried against every in-flight claim, most pods share a few
// requirement sets, and a claim's requirements change only when it takes a
// pod (docs/karpenter-provisioning.md#speed-without-different-answers).
func (n *nodeClaim) compatible(data *podData) bool {
	id := data.reqID
	if id == 0 { // no requirements: nothing to conflict
		return true
	}
	if id >= len(n.compat) {
		n.compat = append(n.compat, make([]uint8, id+1-len(n.compat))...)
	}
	switch n.compat[id] {
	case 1:
		return true
	case 2:
		return false
	}
	ok := compatibleOK(n.requirements, data.requirements, allowWellKnown)
	n.compat[id] = 2
	if ok {
		n.compat[id] = 1
	}
	return ok
}

// canAdd checks taints, host ports, requirements, topology and the
// instance types that would still fit; it returns the narrowed
// requirements and instance types without changing the claim.
func (n *nodeClaim) canAdd(pod *corev1.Pod, data *podData, relaxMinValues bool) (scheduling.Requirements, instancetype.InstanceTypes, error) {
	if err := tolerates(n.template.Taints, pod.Spec.Tolerations); err != nil {
		return nil, nil, err
	}
	if err := n.hostPorts.conflicts(pod, hostPortsOf(pod)); err != nil {
		return nil, nil, fmt.Errorf("checking host port usage, %w", err)
	}
	// Most pods tried against an in-flight claim do not fit it: the cheap
	// check comes first, the worded error only when there is one.
	if !n.requirements.IsCompatible(data.requirements, allowWellKnown) {
		return nil, nil, fmt.Errorf("incompatible requirements, %w", n.requirements.Compatible(data.requirements, allowWellKnown))
	}
	reqs := copyRequirements(n.requirements)
	// Keys are distinct, so adding them in map order intersects the same
	// pairs as adding them sorted.
	for _, r := range data.requirements {
		reqs.Add(r)
	}
	topo, err := n.topology.addRequirements(pod, n.template.Taints, data.strictRequirements, reqs, allowWellKnown)
	if err != nil {
		return nil, nil, err
	}
	if err := reqs.Compatible(topo, allowWellKnown); err != nil {
		return nil, nil, err
	}
	addNarrowed(reqs, topo)
	if !reqs.HasMinValues() && equalRequirements(reqs, n.requirements) {
		// The pod narrows nothing: every option still meets the
		// requirements and has its offering, so only resources can drop
		// one. When none fits, the full filter words the error.
		if n.ownTypes && n.keepsAll(data) {
			return reqs, n.instanceTypes, nil
		}
		total := merge(n.requests, data.requests)
		if kept := n.cache.keepFitting(n.instanceTypes, n.requestsVec.plus(data.vec, total), n.ownTypes); len(kept) > 0 {
			return reqs, kept, nil
		}
	}
	total := merge(n.requests, data.requests)
	remaining, unsatisfiable, err := n.cache.filterInstanceTypes(n.instanceTypes, !n.ownTypes, reqs, data.requests, n.daemonResources, total, relaxMinValues)
	if relaxMinValues {
		for key, min := range unsatisfiable {
			m := min
			reqs.Get(key).MinValues = &m
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return reqs, remaining, nil
}

// add places the pod with the outcome of canAdd.
func (n *nodeClaim) add(pod *corev1.Pod, data *podData, reqs scheduling.Requirements, its instancetype.InstanceTypes) {
	n.pods = append(n.pods, pod)
	// canAdd's list is a fresh one or, when nothing was dropped, this
	// claim's own; the same list keeps its ceiling.
	sameTypes := len(its) == len(n.instanceTypes) && (len(its) == 0 || &its[0] == &n.instanceTypes[0])
	n.instanceTypes, n.boundsValid, n.ownTypes = its, n.boundsValid && sameTypes, true
	// The claim's request list is its own (newNodeClaim copies the
	// daemon overhead), so it is summed in place.
	if n.requests == nil {
		n.requests = corev1.ResourceList{}
	}
	mergeInto(n.requests, data.requests)
	n.requestsVec = n.requestsVec.plus(data.vec, n.requests)
	n.requirements = reqs
	clear(n.compat)
	h, ok := reqs[corev1.LabelHostname]
	n.hostPlain = ok && h.Len() == 1 && h.Has(n.hostname)
	n.topology.registerHost(n.hostname, &n.hostReg)
	n.topology.record(pod, n.template.Taints, reqs, allowWellKnown)
	n.hostPorts.add(pod, hostPortsOf(pod))
}

// finalize drops the placeholder hostname once packing is over.
func (n *nodeClaim) finalize() { delete(n.requirements, corev1.LabelHostname) }

// instanceTypeFilterError says which of the three criteria (requirements,
// resources, offering) no instance type met, alone or in combination, in
// Karpenter's words (docs/karpenter-provisioning.md#instance-type-filter).
type instanceTypeFilterError struct {
	requirementsMet, fits, hasOffering                            bool
	requirementsAndFits, requirementsAndOffering, fitsAndOffering bool
	minValuesErr                                                  error
	requirements                                                  scheduling.Requirements
	podRequests, daemonRequests                                   corev1.ResourceList
}

var millionCPU = resource.MustParse("1M")

func (e instanceTypeFilterError) Error() string {
	tail := fmt.Sprintf("requirements=%s, resources=%s", e.requirements, resourcesString(merge(e.daemonRequests, e.podRequests)))
	switch {
	case e.minValuesErr != nil:
		return fmt.Sprintf("%s, %s", e.minValuesErr.Error(), tail)
	case !e.requirementsMet && !e.fits && !e.hasOffering:
		return "no instance type met the scheduling requirements or had enough resources or had a required offering, " + tail
	case !e.requirementsMet && !e.fits:
		return "no instance type met the scheduling requirements or had enough resources, " + tail
	case !e.requirementsMet && !e.hasOffering:
		return "no instance type met the scheduling requirements or had a required offering, " + tail
	case !e.fits && !e.hasOffering:
		return "no instance type had enough resources or had a required offering, " + tail
	case !e.requirementsMet:
		return "no instance type met all requirements, " + tail
	case !e.fits:
		msg := "no instance type has enough resources, " + tail
		if cpu := e.podRequests[corev1.ResourceCPU]; cpu.Cmp(millionCPU) >= 0 {
			msg += " (CPU request >= 1 Million, m vs M typo?)"
		}
		return msg
	case !e.hasOffering:
		return "no instance type has the required offering, " + tail
	case e.requirementsAndFits:
		return "no instance type which met the scheduling requirements and had enough resources, had a required offering, " + tail
	case e.fitsAndOffering:
		return "no instance type which had enough resources and the required offering met the scheduling requirements, " + tail
	case e.requirementsAndOffering:
		return "no instance type which met the scheduling requirements and the required offering had the required resources, " + tail
	}
	return "no instance type met the requirements/resources/offering tuple, " + tail
}

// filterInstanceTypes keeps the instance types that meet the requirements,
// fit the total requests and have an available compatible offering; with
// minValues it also checks that enough distinct values remain.
//
// shared says its is one of the lists new NodeClaims start from (a pool's
// types, or those within its limits), never changed during the solve: the
// type answers are then also kept by position in it.
func (c *filterCache) filterInstanceTypes(its instancetype.InstanceTypes, shared bool, reqs scheduling.Requirements, podRequests, daemonRequests,
	total corev1.ResourceList, relaxMinValues bool) (instancetype.InstanceTypes, map[string]int, error) {
	e := instanceTypeFilterError{requirements: reqs, podRequests: podRequests, daemonRequests: daemonRequests}
	var remaining instancetype.InstanceTypes
	verdicts, pos := c.verdicts(reqs, its, shared)
	r := newRequestVec(total)
	for i, it := range its {
		compat, offer := verdictAt(verdicts, pos, i, it, reqs)
		fit := c.fitsType(r, it)
		e.requirementsMet = e.requirementsMet || compat
		e.fits = e.fits || fit
		e.hasOffering = e.hasOffering || offer
		e.requirementsAndFits = e.requirementsAndFits || (compat && fit && !offer)
		e.requirementsAndOffering = e.requirementsAndOffering || (compat && offer && !fit)
		e.fitsAndOffering = e.fitsAndOffering || (fit && offer && !compat)
		if compat && fit && offer {
			remaining = append(remaining, it)
		}
	}
	var unsatisfiable map[string]int
	if reqs.HasMinValues() {
		_, unsatisfiable, e.minValuesErr = remaining.SatisfiesMinValues(reqs)
		if e.minValuesErr != nil {
			if relaxMinValues {
				e.minValuesErr = nil
			} else {
				remaining = nil
			}
		}
	}
	if len(remaining) == 0 {
		return nil, unsatisfiable, e
	}
	return remaining, unsatisfiable, nil
}

// keepFitting keeps the instance types whose allocatable holds total. When
// every type still fits and reuse allows it, the list itself is returned:
// most pods joining a claim drop no option, and copying the list each time
// was a large share of the solve's allocations.
func (c *filterCache) keepFitting(its instancetype.InstanceTypes, r requestVec, reuse bool) instancetype.InstanceTypes {
	first := 0
	for first < len(its) && c.fitsType(r, its[first]) {
		first++
	}
	if first == len(its) && reuse {
		return its
	}
	if first == len(its) {
		return append(instancetype.InstanceTypes(nil), its...)
	}
	out := make(instancetype.InstanceTypes, first, len(its)-1)
	copy(out, its[:first])
	for _, it := range its[first+1:] {
		if c.fitsType(r, it) {
			out = append(out, it)
		}
	}
	return out
}

// equalRequirements tells whether two requirement sets allow exactly the
// same values.
func equalRequirements(a, b scheduling.Requirements) bool {
	if len(a) != len(b) {
		return false
	}
	for key, ra := range a {
		rb, ok := b[key]
		if !ok {
			return false
		}
		if ra == rb {
			continue
		}
		if ra.Complement() != rb.Complement() || ra.Len() != rb.Len() {
			return false
		}
		gta, hasGTa := ra.GreaterThan()
		gtb, hasGTb := rb.GreaterThan()
		lta, hasLTa := ra.LessThan()
		ltb, hasLTb := rb.LessThan()
		if hasGTa != hasGTb || hasLTa != hasLTb || (hasGTa && gta != gtb) || (hasLTa && lta != ltb) {
			return false
		}
		if !ra.SameValues(rb) {
			return false
		}
	}
	return true
}

// addNarrowed is reqs.Add(topo.Values()...) for topo, a copy of reqs that
// topology may have narrowed: a key topology left alone holds the very
// requirement reqs holds, and a requirement intersected with itself allows
// exactly what it allowed (its values already lie within its bounds), so
// only the narrowed keys are intersected. Requirements with minValues are
// intersected all the same, so the claim gets its own copy:
// --min-values-policy=BestEffort lowers minValues in place (canAdd). Every
// pod tried on a claim came through here, and re-intersecting its dozen
// keys was most of the solve's allocations
// (docs/karpenter-provisioning.md#speed-without-different-answers).
func addNarrowed(reqs, topo scheduling.Requirements) {
	for key, r := range topo {
		if reqs[key] != r || r.MinValues != nil {
			reqs.Add(r)
		}
	}
}

// copyRequirements is NewRequirements(r.Values()...) without sorting: the
// keys are distinct, so the copy holds the same requirement pointers.
func copyRequirements(r scheduling.Requirements) scheduling.Requirements {
	out := make(scheduling.Requirements, len(r)+2)
	for key, req := range r {
		out[key] = req
	}
	return out
}
