// Package provisioner is Karpenter's provisioning controller: it batches
// the pods kube-scheduler could not place, runs the provisioning solve over
// the cluster and the pools, nominates pods to nodes that will take them and
// creates NodeClaims for the rest (docs/karpenter-provisioning.md).
package provisioner

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/events"
	"github.com/berth-sim/berth/internal/karpenter/podutil"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
)

// Name is the controller's name and the events' reporting component.
const Name = "karpenter"

// Timing (docs/karpenter-provisioning.md#batching).
const (
	BatchIdleDuration = time.Second
	BatchMaxDuration  = 10 * time.Second
	// podRequeue is how often a pod that stays provisionable triggers again.
	podRequeue = 10 * time.Second
	// nominationWindow is how long a node keeps a nomination:
	// max(2 x BatchMaxDuration, 10s).
	nominationWindow = 2 * BatchMaxDuration
)

// Controller implements sim.Controller.
type Controller struct {
	catalog *pools.Catalog
}

// New returns the provisioner over a shared instance-type catalog.
func New(catalog *pools.Catalog) *Controller { return &Controller{catalog: catalog} }

// Name implements sim.Controller.
func (c *Controller) Name() string { return Name + "-provisioner" }

// Sync triggers on provisionable pods, and when the batching window has
// closed, schedules.
func (c *Controller) Sync(s *cluster.State) (bool, error) {
	if len(s.NodePools) == 0 && len(s.Provisioners) == 0 {
		return false, nil
	}
	ks := &s.Karpenter
	pending := provisionablePods(s)
	changed := c.trigger(s, pending)
	b := ks.Batch
	if b == nil {
		return changed, nil
	}
	end := b.LastTrigger.Add(BatchIdleDuration)
	if max := b.Start.Add(BatchMaxDuration); max.Before(end) {
		end = max
	}
	if s.Now.Before(end) {
		s.AddTimer(cluster.Timer{At: end, Owner: c.Name(), Settling: true})
		return changed, nil
	}
	ks.Batch = nil
	events.PruneDedupe(s)
	if err := c.schedule(s, pending); err != nil {
		return true, err
	}
	return true, nil
}

// trigger records a trigger for every provisionable pod that is new or due
// for its periodic requeue, opening or extending the batch window.
func (c *Controller) trigger(s *cluster.State, pending []*corev1.Pod) bool {
	ks := &s.Karpenter
	live := map[types.UID]bool{}
	changed := false
	var next time.Time
	for _, p := range pending {
		live[p.UID] = true
		due, seen := ks.Requeue[p.UID]
		if seen && s.Now.Before(due) {
			if next.IsZero() || due.Before(next) {
				next = due
			}
			continue
		}
		if ks.Requeue == nil {
			ks.Requeue = map[types.UID]time.Time{}
		}
		ks.Requeue[p.UID] = s.Now.Add(podRequeue)
		if next.IsZero() || ks.Requeue[p.UID].Before(next) {
			next = ks.Requeue[p.UID]
		}
		changed = true
		switch {
		case ks.Batch == nil:
			ks.Batch = &cluster.KarpenterBatch{Start: s.Now, LastTrigger: s.Now, Pods: []types.UID{p.UID}}
		case !containsUID(ks.Batch.Pods, p.UID):
			ks.Batch.LastTrigger = s.Now
			ks.Batch.Pods = append(ks.Batch.Pods, p.UID)
		}
	}
	for uid := range ks.Requeue {
		if !live[uid] {
			delete(ks.Requeue, uid)
		}
	}
	if !next.IsZero() {
		// Periodic requeues only fire under `advance`: a pod nobody can
		// help must not keep `apply` running.
		s.AddTimer(cluster.Timer{At: next, Owner: c.Name()})
	}
	return changed
}

func containsUID(list []types.UID, uid types.UID) bool {
	for _, u := range list {
		if u == uid {
			return true
		}
	}
	return false
}

// provisionablePods are the pods kube-scheduler marked Unschedulable that
// are unbound, not preempting, and not owned by a DaemonSet or a node.
func provisionablePods(s *cluster.State) []*corev1.Pod {
	// It runs every round: walk the pods once and sort only what is kept.
	var out []*corev1.Pod
	for _, p := range s.Pods {
		if p.Spec.NodeName != "" || p.Status.NominatedNodeName != "" || p.DeletionTimestamp != nil || !failedToSchedule(p) {
			continue
		}
		if podutil.OwnedByDaemonSet(p) || podutil.OwnedByNode(p) {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		return cluster.Key(out[i].Namespace, out[i].Name) < cluster.Key(out[j].Namespace, out[j].Name)
	})
	return out
}

func failedToSchedule(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// Round is one provisioning round's decision and what it was made over.
type Round struct {
	Pools   []*pools.Pool
	Results *provisioning.Results
}

// Decide runs the provisioning solve over the state as it is, without
// writing anything: the pods given (or every provisionable pod when nil)
// against the nodes, in-flight NodeClaims and ready pools. The
// differential test against genuine Karpenter calls it directly.
func Decide(s *cluster.State, catalog *pools.Catalog, pending []*corev1.Pod) (*Round, error) {
	round, in := Prepare(s, catalog, pending)
	if in == nil {
		return round, nil
	}
	res, err := provisioning.Solve(in)
	if err != nil {
		return nil, err
	}
	truncate(res)
	round.Results = res
	return round, nil
}

// Prepare is Decide up to the solve: the round with empty results and the
// solver's input, nil when there is nothing to solve (no valid pod or no
// ready pool). Benchmarks use it to time provisioning.Solve alone.
func Prepare(s *cluster.State, catalog *pools.Catalog, pending []*corev1.Pod) (*Round, *provisioning.Input) {
	if pending == nil {
		pending = provisionablePods(s)
	}
	all := pools.List(s)
	var ready []*pools.Pool
	for _, p := range all {
		if p.NotReady == "" {
			ready = append(ready, p)
		}
	}
	catalog.Resolve(s, ready)
	var pods []*corev1.Pod
	for _, p := range pending {
		// Karpenter only logs the pods it ignores ("ignoring pod").
		if Validate(s, p) != nil {
			continue
		}
		pods = append(pods, injectVolumeTopology(s, p))
	}
	round := &Round{Pools: ready, Results: &provisioning.Results{PodErrors: map[string]error{}}}
	if len(pods) == 0 {
		return round, nil
	}
	if len(ready) == 0 {
		// Karpenter logs "no nodepools found" and publishes nothing.
		return round, nil
	}
	in := &provisioning.Input{Nodes: stateNodes(s, all), Pods: pods, DaemonSetPods: daemonSetPods(s), HostnameSeq: &s.Karpenter.HostnameSeq,
		Cluster: clusterView(s)}
	for _, p := range pods {
		if v := podVolumes(s, p); v != nil {
			if in.PodVolumes == nil {
				in.PodVolumes = map[types.UID]provisioning.Volumes{}
			}
			in.PodVolumes[p.UID] = v
		}
	}
	for _, p := range ready {
		in.NodePools = append(in.NodePools, p.Solver)
	}
	return round, in
}

// Validate is why Karpenter ignores a pending pod (nil if it does not):
// its node selection or its volume claims.
func Validate(s *cluster.State, p *corev1.Pod) error {
	if err := validatePod(p); err != nil {
		return err
	}
	return validateClaims(s, p)
}

// schedule runs one provisioning round over the pending pods and carries
// its decision out: events, nominations, NodeClaims.
func (c *Controller) schedule(s *cluster.State, pending []*corev1.Pod) error {
	round, err := Decide(s, c.catalog, pending)
	if err != nil {
		return err
	}
	res, ready := round.Results, round.Pools
	for _, sk := range res.SkippedNodePools {
		msg := "NodePool requirements filtered out all compatible available instance types"
		if sk.MinValues {
			msg += " due to minValues incompatibility"
		}
		if p := poolNamed(ready, sk.Name); p != nil {
			c.publish(s, poolRef(p), corev1.EventTypeWarning, "NoCompatibleInstanceTypes", msg, time.Minute, string(p.UID))
		}
	}
	for _, key := range sortedErrorKeys(res.PodErrors) {
		p := s.Pods[key]
		c.publish(s, podRef(p), corev1.EventTypeWarning, "FailedScheduling", fmt.Sprintf("Failed to schedule pod, %s", res.PodErrors[key]), 5*time.Minute, string(p.UID))
	}
	for _, e := range res.ExistingNodes {
		c.nominate(s, e.Node.Name)
		for _, p := range e.Pods {
			c.publish(s, podRef(p), corev1.EventTypeNormal, "Nominated", "Pod should schedule on: "+placement(e.Node.NodeClaimName, e.Node.NodeName),
				0, string(p.UID))
		}
	}
	for _, nc := range res.NewNodeClaims {
		p := poolNamed(ready, nc.NodePool.Name)
		name, err := c.create(s, p, nc)
		if err != nil {
			continue
		}
		c.nominate(s, name)
		for _, pod := range nc.Pods {
			c.publish(s, podRef(pod), corev1.EventTypeNormal, "Nominated", "Pod should schedule on: "+placement(name, ""), 0, string(pod.UID))
		}
	}
	return nil
}

// truncate keeps at most MaxInstanceTypes per new NodeClaim without
// breaking minValues; a claim that cannot keep them fails its pods.
func truncate(res *provisioning.Results) {
	var kept []*provisioning.NewNodeClaim
	for _, nc := range res.NewNodeClaims {
		its, err := nc.InstanceTypes.Truncate(nc.Requirements, provisioning.MaxInstanceTypes)
		if err != nil {
			for _, p := range nc.Pods {
				res.PodErrors[p.Namespace+"/"+p.Name] = fmt.Errorf("pod didn’t schedule because NodePool couldn’t meet minValues requirements, %w (NodePool=%s)", err, nc.NodePool.Name)
			}
			continue
		}
		nc.InstanceTypes = its
		kept = append(kept, nc)
	}
	res.NewNodeClaims = kept
}

func placement(nodeClaim, node string) string {
	var parts []string
	if nodeClaim != "" {
		parts = append(parts, "nodeclaim/"+nodeClaim)
	}
	if node != "" {
		parts = append(parts, "node/"+node)
	}
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ", "
		}
		out += p
	}
	return out
}

func (c *Controller) nominate(s *cluster.State, name string) {
	if s.Karpenter.Nominated == nil {
		s.Karpenter.Nominated = map[string]time.Time{}
	}
	s.Karpenter.Nominated[name] = s.Now.Add(nominationWindow)
}

// publish records a Karpenter event, deduplicated on reason and values.
func (c *Controller) publish(s *cluster.State, ref corev1.ObjectReference, typ, reason, message string, dedupe time.Duration, values ...string) {
	events.Publish(s, events.Event{Regarding: ref, Type: typ, Reason: reason, Message: message, DedupeValues: values, DedupeTimeout: dedupe})
}

func podRef(p *corev1.Pod) corev1.ObjectReference { return cluster.Regarding("Pod", "v1", p) }

func poolRef(p *pools.Pool) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: p.Kind, APIVersion: p.APIVersion, Name: p.Name, UID: p.UID}
}

func poolNamed(list []*pools.Pool, name string) *pools.Pool {
	for _, p := range list {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func sortedErrorKeys(m map[string]error) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
