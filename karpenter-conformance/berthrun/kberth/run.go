// Command kberth is berth's side of the Karpenter differential test, run as
// a child process by package berthrun: here berth builds on its own
// dependency set (k8s.io v0.36), which genuine Karpenter's module (pinned to
// v0.33) cannot compile it against. It loads a scenario into a cluster.State
// the way upstream/ loads it into a fake API server, runs berth's
// provisioning round (provisioner.Prepare, provisioning.Solve and Decide's
// truncation: Decide split so Solve can be timed alone) and answers the
// neutral result.
//
// Everything the two schedulers break ties on is made identical: UIDs (the
// hash of uid), pending pods' creation timestamps (baseTime
// + i s), managed nodes' labels and NodeClaims, and the launch model.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
	karpv1 "github.com/berth-sim/berth/internal/karpenter/apis/v1"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioner"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// Seed seeds the state's random source (berth draws nothing from it in a
// provisioning round that reaches the result).
const Seed = 1

// Env is a scenario loaded into a cluster state, ready to provision.
type Env struct {
	State   *cluster.State
	Catalog *pools.Catalog
}

// Schedule is provisioner.Decide split at the solve (Prepare, Solve, then
// the same truncation Decide does) so Solve can be timed alone.
func (e *Env) Schedule(sc *Scenario) (*Result, time.Duration, error) {
	round, in := provisioner.Prepare(e.State, e.Catalog, nil)
	var solve time.Duration
	if in != nil {
		start := time.Now()
		res, err := provisioning.Solve(in)
		solve = time.Since(start)
		if err != nil {
			return nil, solve, err
		}
		// Decide's truncation: Truncate keeps MaxInstanceTypes per claim,
		// failing the claim's pods when minValues cannot be kept.
		round.Results = truncate(res)
	}
	out := convert(round.Results)
	e.accountDropped(sc, round, out)
	return out, solve, nil
}

// Decide runs provisioner.Decide itself, the entry point the controller
// uses; the agreement test checks it agrees with Schedule.
func (e *Env) Decide(sc *Scenario) (*Result, error) {
	round, err := provisioner.Decide(e.State, e.Catalog, nil)
	if err != nil {
		return nil, err
	}
	out := convert(round.Results)
	e.accountDropped(sc, round, out)
	return out, nil
}

func truncate(res *provisioning.Results) *provisioning.Results {
	var kept []*provisioning.NewNodeClaim
	for _, nc := range res.NewNodeClaims {
		its, err := nc.InstanceTypes.Truncate(nc.Requirements, provisioning.MaxInstanceTypes)
		if err != nil {
			for _, p := range nc.Pods {
				res.PodErrors[podKey(p)] = fmt.Errorf("pod didn’t schedule because NodePool couldn’t meet minValues requirements, %w (NodePool=%s)", err, nc.NodePool.Name)
			}
			continue
		}
		nc.InstanceTypes = its
		kept = append(kept, nc)
	}
	res.NewNodeClaims = kept
	return res
}

// accountDropped reports the pods the round never solved, with the texts
// the upstream runner uses: "ignoring pod, <reason>" for pods Karpenter's
// validation ignores, "no nodepools found" when no pool is ready.
func (e *Env) accountDropped(sc *Scenario, round *provisioner.Round, out *Result) {
	seen := map[string]bool{}
	for _, c := range out.NodeClaims {
		for _, p := range c.Pods {
			seen[p] = true
		}
	}
	for _, p := range out.Existing {
		seen[p.Pod] = true
	}
	for _, p := range out.Errors {
		seen[p.Pod] = true
	}
	added := false
	for _, p := range sc.Pods {
		key := podKey(p)
		if seen[key] {
			continue
		}
		msg := noDecision
		if live := e.State.Pods[key]; live != nil {
			if err := provisioner.Validate(e.State, live); err != nil {
				msg = "ignoring pod, " + err.Error()
			} else if len(round.Pools) == 0 {
				msg = "no nodepools found"
			}
		}
		out.Errors = append(out.Errors, PodError{Pod: key, Error: msg})
		added = true
	}
	if added {
		sort.Slice(out.Errors, func(i, j int) bool { return out.Errors[i].Pod < out.Errors[j].Pod })
	}
}

// NewEnv builds the cluster state for sc.
func NewEnv(sc *Scenario) (*Env, error) {
	s := cluster.New("", Seed)
	s.Info.Region = sc.Region
	s.Info.Zones = append([]string(nil), sc.Zones...)
	catalog := pools.NewCatalog()
	if len(sc.InstanceTypes) > 0 {
		restrict(s, catalog, sc)
	}
	stamp := func(obj metav1.Object, parts ...string) {
		obj.SetUID(uid(parts...))
		obj.SetResourceVersion(s.Bump())
		s.NoteCreated(obj.GetUID())
	}
	ns := func(name string) {
		if _, ok := s.Namespaces[name]; !ok {
			n := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
			stamp(n, "namespace", name)
			s.Namespaces[name] = n
		}
	}
	ns(metav1.NamespaceDefault)
	ns(metav1.NamespaceSystem)

	for _, o := range sc.StorageClasses {
		c := o.DeepCopy()
		stamp(c, "storageclass", c.Name)
		s.StorageClasses[c.Name] = c
	}
	for _, o := range sc.PersistentVolumes {
		c := o.DeepCopy()
		stamp(c, "pv", c.Name)
		s.PersistentVolumes[c.Name] = c
	}
	for _, o := range sc.PersistentVolumeClaims {
		c := o.DeepCopy()
		ns(c.Namespace)
		stamp(c, "pvc", c.Namespace, c.Name)
		s.PersistentVolumeClaims[cluster.Key(c.Namespace, c.Name)] = c
	}
	for _, o := range sc.CSINodes {
		c := o.DeepCopy()
		stamp(c, "csinode", c.Name)
		s.CSINodes[c.Name] = c
	}
	classes := map[string]bool{}
	for _, np := range sc.NodePools {
		c, err := nodePool(np)
		if err != nil {
			return nil, err
		}
		stamp(c, "nodepool", c.Name)
		s.NodePools[c.Name] = c
		if ref := c.Spec.Template.Spec.NodeClassRef; ref != nil && ref.Kind == "EC2NodeClass" {
			classes[ref.Name] = true
		}
	}
	// One AL2023 EC2NodeClass per name the pools refer to: upstream's
	// catalog is sized for AL2023 defaults, whatever the class says.
	for _, name := range cluster.SortedKeys(classes) {
		nc := &karpv1.EC2NodeClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: karpv1.EC2NodeClassSpec{
				AMISelectorTerms:           []karpv1.AMISelectorTerm{{Alias: "al2023@latest"}},
				SubnetSelectorTerms:        []karpv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "berth"}}},
				SecurityGroupSelectorTerms: []karpv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "berth"}}},
				Role:                       "KarpenterNodeRole-berth",
			},
		}
		stamp(nc, "ec2nodeclass", name)
		s.EC2NodeClasses[name] = nc
	}
	for _, ds := range sc.DaemonSets {
		c := ds.DeepCopy()
		ns(c.Namespace)
		stamp(c, "daemonset", c.Namespace, c.Name)
		s.DaemonSets[cluster.Key(c.Namespace, c.Name)] = c
	}
	for _, n := range sc.Nodes {
		node := n.Node.DeepCopy()
		if _, dup := s.Nodes[node.Name]; dup {
			return nil, fmt.Errorf("scenario %s: duplicate node %q", sc.Name, node.Name)
		}
		stamp(node, "node", node.Name)
		if node.Spec.ProviderID == "" {
			node.Spec.ProviderID = "berth:///" + node.Name
		}
		if len(node.Status.Conditions) == 0 {
			node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		}
		if n.Managed {
			// As upstream/: registered and initialized (unless the state
			// says otherwise), with a NodeClaim carrying the node's labels
			// and resources.
			if node.Labels == nil {
				node.Labels = map[string]string{}
			}
			if n.State == "inFlight" {
				// Launched, no Node yet: only the NodeClaim, without the
				// hostname label; no pods can be bound.
				nc := nodeClaimFor(node)
				delete(nc.Labels, corev1.LabelHostname)
				nc.Status.NodeName = ""
				stamp(nc, "nodeclaim", node.Name)
				s.NodeClaims[nc.Name] = nc
				continue
			}
			node.Labels[provisioner.LabelRegistered] = "true"
			if n.State != "notInitialized" {
				node.Labels[provisioner.LabelInitialized] = "true"
			}
			nc := nodeClaimFor(node)
			stamp(nc, "nodeclaim", node.Name)
			s.NodeClaims[nc.Name] = nc
		}
		s.Nodes[node.Name] = node
		s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, node.Name)
		for _, p := range n.Pods {
			c := p.DeepCopy()
			ns(c.Namespace)
			stamp(c, "pod", c.Namespace, c.Name)
			c.Spec.NodeName = node.Name
			c.Status.Phase = corev1.PodRunning
			c.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
			s.Pods[cluster.Key(c.Namespace, c.Name)] = c
		}
	}
	for i, p := range sc.Pods {
		c := p.DeepCopy()
		ns(c.Namespace)
		stamp(c, "pod", c.Namespace, c.Name)
		if c.CreationTimestamp.IsZero() {
			c.CreationTimestamp = metav1.NewTime(baseTime.Add(time.Duration(i) * time.Second))
		}
		c.Spec.NodeName = ""
		c.Status.Phase = corev1.PodPending
		// Karpenter only takes pods kube-scheduler has marked Unschedulable.
		c.Status.Conditions = []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		}}
		key := cluster.Key(c.Namespace, c.Name)
		if _, dup := s.Pods[key]; dup {
			return nil, fmt.Errorf("scenario %s: duplicate pod %s", sc.Name, key)
		}
		s.Pods[key] = c
	}
	return &Env{State: s, Catalog: catalog}, nil
}

// restrict limits the catalog to the scenario's instance types by marking
// every offering of the others unavailable for longer than the round: they
// stay listed (berth lists the whole catalog) but can never be chosen.
func restrict(s *cluster.State, catalog *pools.Catalog, sc *Scenario) {
	keep := map[string]bool{}
	for _, n := range sc.InstanceTypes {
		keep[n] = true
	}
	// The TTL is measured from the mark: mark in the future so it outlives
	// the state's clock.
	future := s.Now.Add(24 * time.Hour)
	for _, it := range instancetype.List(sc.Region, instancetype.ZonesOf(sc.Zones...), instancetype.NodeClassOptions{}, nil, catalog.Unavailable, s.Now) {
		if keep[it.Name] {
			continue
		}
		for _, o := range it.Offerings {
			catalog.Unavailable.MarkUnavailable(it.Name, o.Zone(), o.CapacityType(), future)
		}
	}
}

// nodePool decodes a karpenter.sh/v1 NodePool (upstream's type, as JSON)
// into berth's type, the way berth reads manifests.
func nodePool(raw json.RawMessage) (*karpv1.NodePool, error) {
	out := &karpv1.NodePool{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("nodepool: %w", err)
	}
	return out, nil
}

func nodeClaimFor(node *corev1.Node) *karpv1.NodeClaim {
	labels := map[string]string{}
	for k, v := range node.Labels {
		labels[k] = v
	}
	return &karpv1.NodeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: labels},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef: &karpv1.NodeClassReference{Group: karpv1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
		},
		Status: karpv1.NodeClaimStatus{
			ProviderID:  node.Spec.ProviderID,
			NodeName:    node.Name,
			Capacity:    node.Status.Capacity.DeepCopy(),
			Allocatable: node.Status.Allocatable.DeepCopy(),
		},
	}
}

// convert turns berth's results into the neutral result.
func convert(r *provisioning.Results) *Result {
	out := &Result{}
	for _, nc := range r.NewNodeClaims {
		// OrderByPrice sorts in place: order a copy, as ToNodeClaim orders
		// the claim's options (berth breaks price ties by name, which is the
		// upstream runner's canonical order).
		ordered := append(instancetype.InstanceTypes(nil), nc.InstanceTypes...).OrderByPrice(nc.Requirements)
		c := NodeClaim{
			NodePool:      nc.NodePool.Name,
			Zones:         inValues(nc.Requirements, corev1.LabelTopologyZone),
			CapacityTypes: inValues(nc.Requirements, scheduling.CapacityTypeLabelKey),
			Archs:         inValues(nc.Requirements, corev1.LabelArchStable),
		}
		for _, it := range ordered {
			c.InstanceTypes = append(c.InstanceTypes, it.Name)
			c.Prices = append(c.Prices, cheapest(it, nc.Requirements))
		}
		c.Launch = launch(ordered, nc.Requirements)
		for _, p := range nc.Pods {
			c.Pods = append(c.Pods, podKey(p))
		}
		sort.Strings(c.Pods)
		out.NodeClaims = append(out.NodeClaims, c)
	}
	for _, en := range r.ExistingNodes {
		for _, p := range en.Pods {
			out.Existing = append(out.Existing, Placement{Pod: podKey(p), Node: en.Node.Name})
		}
	}
	sort.Slice(out.Existing, func(i, j int) bool { return out.Existing[i].Pod < out.Existing[j].Pod })
	for key, err := range r.PodErrors {
		out.Errors = append(out.Errors, PodError{Pod: key, Error: err.Error()})
	}
	sort.Slice(out.Errors, func(i, j int) bool { return out.Errors[i].Pod < out.Errors[j].Pod })
	return out
}

func inValues(reqs scheduling.Requirements, key string) []string {
	if !reqs.Has(key) {
		return nil
	}
	r := reqs.Get(key)
	if r.Operator() != corev1.NodeSelectorOpIn {
		return nil
	}
	v := append([]string(nil), r.Values()...)
	sort.Strings(v)
	return v
}

// allowWellKnown is how offerings are matched (upstream
// AllowUndefinedWellKnownLabels).
var allowWellKnown = scheduling.AllowUndefinedWellKnownLabels(scheduling.AWSVocabulary)

func cheapest(it *instancetype.InstanceType, reqs scheduling.Requirements) float64 {
	best := math.MaxFloat64
	for _, o := range it.Offerings {
		if o.Available && reqs.IsCompatible(o.Requirements, allowWellKnown) && o.Price < best {
			best = o.Price
		}
	}
	return best
}

// launch is upstream/'s launch model (Offering), line for line:
// reserved, else spot, when the claim allows it and some type offers it,
// else on-demand; then the cheapest compatible offering of that capacity
// type, earlier type then lower zone on equal price.
func launch(its instancetype.InstanceTypes, reqs scheduling.Requirements) Offering {
	ct := scheduling.CapacityTypeOnDemand
	for _, want := range []string{scheduling.CapacityTypeReserved, scheduling.CapacityTypeSpot} {
		if !reqs.Get(scheduling.CapacityTypeLabelKey).Has(want) {
			continue
		}
		narrowed := scheduling.NewRequirements(reqs.Values()...)
		narrowed[scheduling.CapacityTypeLabelKey] = scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, want)
		offered := false
		for _, it := range its {
			if len(it.Offerings.Available().Compatible(narrowed)) != 0 {
				offered = true
				break
			}
		}
		if offered {
			ct = want
			break
		}
	}
	var best Offering
	found := false
	for _, it := range its {
		for _, o := range it.Offerings.Available().Compatible(reqs) {
			if o.CapacityType() != ct {
				continue
			}
			cand := Offering{InstanceType: it.Name, Zone: o.Zone(), CapacityType: ct, Price: o.Price}
			if !found || cand.Price < best.Price || (cand.Price == best.Price && cand.InstanceType == best.InstanceType && cand.Zone < best.Zone) {
				best, found = cand, true
			}
		}
	}
	return best
}

// noDecision labels a pod absent from Solve's results that validation does
// not explain: left out before Solve (e.g. volume topology that could not be
// injected) or passed over by it (Solve with no pool left after the
// instance-type filter reports neither a placement nor an error).
// Both runners use the same words.
const noDecision = "no decision: not in Solve's results"
