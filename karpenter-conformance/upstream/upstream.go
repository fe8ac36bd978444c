// Package upstream runs genuine Karpenter's provisioning scheduler
// (sigs.k8s.io/karpenter pkg/controllers/provisioning, the version pinned in
// this module's go.mod) in-process on a scenario, as one side of the
// differential test.
//
// The cluster is a controller-runtime fake client (no kube-apiserver) with the
// field indexes Karpenter's own envtest environment registers, plus a
// state.Cluster fed the scenario's nodes, NodeClaims and bound pods the way
// Karpenter's informers would. The cloud provider is a stand-in that resolves
// every NodePool to berth's catalog (InstanceTypes). Provisioning runs through
// provisioning.Provisioner.Schedule, the provisioner's own entry point: it
// lists the pending pods, validates them, orders NodePools by weight, injects
// WaitForFirstConsumer volume topology, builds the Topology and the Scheduler
// (NewTopology/NewScheduler, as scheduling_benchmark_test.go does) and runs
// Solve, then truncates each NodeClaim's instance types to MaxInstanceTypes.
// Nothing is launched: the result is read from Schedule's Results.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/awslabs/operatorpkg/status"
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
	"github.com/go-logr/logr"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	pscheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

func init() {
	// Karpenter logs through controller-runtime's global logger; keep it quiet.
	crlog.SetLogger(logr.Discard())
}

// baseTime anchors creation timestamps (shared with the berth runner).
var baseTime = scenario.BaseTime

// Options returns the operator options Schedule reads: Karpenter's defaults
// (PreferencePolicy Respect, MinValuesPolicy Strict, ReservedCapacity on),
// with CPURequests 1000 so the scheduler uses one worker (its parallel
// existing-node search is then sequential; results do not depend on it).
func Options() *options.Options {
	return &options.Options{
		CPURequests:      1000,
		MemoryLimit:      -1,
		PreferencePolicy: options.PreferencePolicyRespect,
		MinValuesPolicy:  options.MinValuesPolicyStrict,
		FeatureGates: options.FeatureGates{
			ReservedCapacity: true,
		},
	}
}

// Env is a scenario loaded into a fake cluster, ready to provision.
type Env struct {
	Ctx         context.Context
	Client      client.Client
	Cluster     *state.Cluster
	Provider    cloudprovider.CloudProvider
	Provisioner *provisioning.Provisioner
}

// Run provisions the scenario's pending pods once with genuine Karpenter.
func Run(sc *scenario.Scenario) (*scenario.Result, error) {
	res, _, err := RunTimed(sc)
	return res, err
}

// Timing is the wall time of one provisioning pass.
type Timing struct {
	// Solve is Scheduler.Solve alone, the number to compare with berth.
	Solve time.Duration
	// Schedule is the whole pass: listing and validating pods, building the
	// topology and scheduler, Solve and truncation.
	Schedule time.Duration
}

// RunTimed is Run that also reports timing.
func RunTimed(sc *scenario.Scenario) (*scenario.Result, Timing, error) {
	env, err := NewEnv(context.Background(), sc)
	if err != nil {
		return nil, Timing{}, err
	}
	return env.Schedule(sc)
}

// Schedule is Provisioner.Schedule step by step, through its exported
// pieces, so the result can be read between Solve and truncation:
// GetPendingPods (validation), deleting nodes' pods, the options Schedule
// passes, Provisioner.NewScheduler (pool weights, instance types, volume
// topology, Topology, daemon overhead), Solve under the same one-minute
// timeout, then Results.TruncateInstanceTypes. Skipped are only its side
// effects on metrics, events and cluster-state nominations.
func (e *Env) Schedule(sc *scenario.Scenario) (*scenario.Result, Timing, error) {
	ctx := e.Ctx
	var timing Timing
	start := time.Now()
	nodes := e.Cluster.Nodes()
	pending, err := e.Provisioner.GetPendingPods(ctx)
	if err != nil {
		return nil, timing, err
	}
	deleting, err := nodes.Deleting().CurrentlyReschedulablePods(ctx, e.Client)
	if err != nil {
		return nil, timing, err
	}
	pods := append(pending, deleting...)
	out := &scenario.Result{}
	if len(pods) > 0 {
		opts := []pscheduling.Options{
			pscheduling.DisableReservedCapacityFallback,
			pscheduling.NumConcurrentReconciles(int(math.Ceil(float64(options.FromContext(ctx).CPURequests) / 1000.0))),
			pscheduling.MinValuesPolicy(options.FromContext(ctx).MinValuesPolicy),
		}
		if options.FromContext(ctx).PreferencePolicy == options.PreferencePolicyIgnore {
			opts = append(opts, pscheduling.IgnorePreferences)
		}
		s, err := e.Provisioner.NewScheduler(ctx, pods, nodes.Active(), opts...)
		switch {
		case errors.Is(err, provisioning.ErrNodePoolsNotFound):
			// Schedule marks every pod with this decision and launches nothing.
			for _, p := range pods {
				out.Errors = append(out.Errors, scenario.PodError{Pod: scenario.PodKey(p), Error: "no nodepools found"})
			}
		case err != nil:
			return nil, timing, fmt.Errorf("creating scheduler, %w", err)
		default:
			timeoutCtx, cancel := context.WithTimeout(ctx, time.Minute)
			solveStart := time.Now()
			results, err := s.Solve(timeoutCtx, pods)
			timing.Solve = time.Since(solveStart)
			cancel()
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return nil, timing, err
			}
			// Canonical order before truncation (which sorts the options in place).
			canonical := map[*pscheduling.NodeClaim][]*cloudprovider.InstanceType{}
			for _, nc := range results.NewNodeClaims {
				canonical[nc] = canonicalOrder(nc.InstanceTypeOptions, nc.Requirements)
			}
			results = results.TruncateInstanceTypes(ctx, pscheduling.MaxInstanceTypes)
			out = convert(results, canonical)
		}
	}
	timing.Schedule = time.Since(start)
	e.accountDropped(sc, out)
	return out, timing, nil
}

// accountDropped reports pods the provisioner never handed to Solve: those
// failing Provisioner.Validate (Schedule logs "ignoring pod") and those whose
// volume topology could not be injected (logged and dropped).
func (e *Env) accountDropped(sc *scenario.Scenario, out *scenario.Result) {
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
		key := scenario.PodKey(p)
		if seen[key] {
			continue
		}
		msg := noDecision
		live := &corev1.Pod{}
		if err := e.Client.Get(e.Ctx, client.ObjectKeyFromObject(p), live); err == nil {
			if verr := e.Provisioner.Validate(e.Ctx, live); verr != nil {
				msg = "ignoring pod, " + verr.Error()
			}
		}
		out.Errors = append(out.Errors, scenario.PodError{Pod: key, Error: msg})
		added = true
	}
	if added {
		sort.Slice(out.Errors, func(i, j int) bool { return out.Errors[i].Pod < out.Errors[j].Pod })
	}
}

// canonicalOrder is OrderByPrice with equal prices ordered by name, cut to
// MaxInstanceTypes (as NodeClaimTemplate.ToNodeClaim cuts). Upstream sorts
// with the unstable sort.Slice, so its order within a run of equal prices,
// and which members of the run at the cut survive, is an accident of input
// order; any choice among them is upstream-possible, this one reproducible.
func canonicalOrder(its cloudprovider.InstanceTypes, reqs scheduling.Requirements) []*cloudprovider.InstanceType {
	type priced struct {
		it    *cloudprovider.InstanceType
		price float64
	}
	list := make([]priced, 0, len(its))
	for _, it := range its {
		list = append(list, priced{it, cheapest(it, reqs)})
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].price != list[j].price {
			return list[i].price < list[j].price
		}
		return list[i].it.Name < list[j].it.Name
	})
	out := make([]*cloudprovider.InstanceType, 0, min(len(list), pscheduling.MaxInstanceTypes))
	for _, p := range lo.Slice(list, 0, pscheduling.MaxInstanceTypes) {
		out = append(out, p.it)
	}
	return out
}

// NewEnv loads sc into a fresh fake client and cluster state.
func NewEnv(ctx context.Context, sc *scenario.Scenario) (*Env, error) {
	ctx = injection.WithControllerName(ctx, "provisioner")
	ctx = options.ToContext(ctx, Options())
	ctx = crlog.IntoContext(ctx, logr.Discard())

	its, err := InstanceTypes(sc.Region, sc.Zones, sc.InstanceTypes)
	if err != nil {
		return nil, err
	}
	cp := &provider{instanceTypes: its}
	c := newClient()
	clk := clock.RealClock{}
	cluster := state.NewCluster(clk, c, cp)

	create := func(o client.Object) error {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, client.ObjectKeyFromObject(o), err)
		}
		return nil
	}
	for _, o := range sc.StorageClasses {
		if err := create(o.DeepCopy()); err != nil {
			return nil, err
		}
	}
	for _, o := range sc.PersistentVolumes {
		if err := create(o.DeepCopy()); err != nil {
			return nil, err
		}
	}
	for _, o := range sc.PersistentVolumeClaims {
		if err := create(o.DeepCopy()); err != nil {
			return nil, err
		}
	}
	// Before the nodes: cluster state reads a node's CSINode (its attach
	// limits) when it first learns the node.
	for _, o := range sc.CSINodes {
		if err := create(o.DeepCopy()); err != nil {
			return nil, err
		}
	}
	for _, np := range sc.NodePools {
		np = np.DeepCopy()
		np.UID = uid("nodepool", np.Name)
		// Schedule only uses Ready pools; a scenario's pools are all ready.
		np.StatusConditions().SetTrue(status.ConditionReady)
		if err := create(np); err != nil {
			return nil, err
		}
	}
	for _, ds := range sc.DaemonSets {
		ds = ds.DeepCopy()
		ds.UID = uid("daemonset", ds.Namespace, ds.Name)
		if err := create(ds); err != nil {
			return nil, err
		}
	}
	var bound []*corev1.Pod
	for _, n := range sc.Nodes {
		node := n.Node.DeepCopy()
		node.UID = uid("node", node.Name)
		if node.Spec.ProviderID == "" {
			node.Spec.ProviderID = "berth:///" + node.Name
		}
		if len(node.Status.Conditions) == 0 {
			node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		}
		var nc *karpv1.NodeClaim
		if n.Managed {
			if node.Labels == nil {
				node.Labels = map[string]string{}
			}
			if n.State == scenario.NodeInFlight {
				// Launched, no Node yet: only the NodeClaim, without the
				// hostname label; no pods can be bound.
				nc = nodeClaimFor(node, karpv1.ConditionTypeLaunched)
				delete(nc.Labels, corev1.LabelHostname)
				nc.Status.NodeName = ""
				if err := create(nc); err != nil {
					return nil, err
				}
				cluster.UpdateNodeClaim(nc)
				continue
			}
			node.Labels[karpv1.NodeRegisteredLabelKey] = "true"
			conditions := []string{karpv1.ConditionTypeLaunched, karpv1.ConditionTypeRegistered}
			if n.State != scenario.NodeNotInitialized {
				node.Labels[karpv1.NodeInitializedLabelKey] = "true"
				conditions = append(conditions, karpv1.ConditionTypeInitialized)
			}
			nc = nodeClaimFor(node, conditions...)
			if err := create(nc); err != nil {
				return nil, err
			}
		}
		if err := create(node); err != nil {
			return nil, err
		}
		for _, p := range n.Pods {
			p = p.DeepCopy()
			p.UID = uid("pod", p.Namespace, p.Name)
			p.Spec.NodeName = node.Name
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
			if err := create(p); err != nil {
				return nil, err
			}
			bound = append(bound, p)
		}
		if nc != nil {
			cluster.UpdateNodeClaim(nc)
		}
		if err := cluster.UpdateNode(ctx, node); err != nil {
			return nil, fmt.Errorf("cluster state for node %s: %w", node.Name, err)
		}
	}
	for _, p := range bound {
		if err := cluster.UpdatePod(ctx, p); err != nil {
			return nil, fmt.Errorf("cluster state for pod %s: %w", scenario.PodKey(p), err)
		}
	}
	for i, p := range sc.Pods {
		p = p.DeepCopy()
		p.UID = uid("pod", p.Namespace, p.Name)
		if p.CreationTimestamp.IsZero() {
			p.CreationTimestamp = metav1.NewTime(baseTime.Add(time.Duration(i) * time.Second))
		}
		p.Spec.NodeName = ""
		p.Status.Phase = corev1.PodPending
		// GetPendingPods only takes pods kube-scheduler has marked Unschedulable.
		p.Status.Conditions = []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		}}
		if err := create(p); err != nil {
			return nil, err
		}
	}
	recorder := events.NewRecorder(&record.FakeRecorder{})
	return &Env{
		Ctx:         ctx,
		Client:      c,
		Cluster:     cluster,
		Provider:    cp,
		Provisioner: provisioning.NewProvisioner(c, recorder, cp, cluster, clk),
	}, nil
}

// newClient is a fake client with the field indexes Karpenter's test
// environment adds to its cache (pkg/test/environment.go).
//
// Its Get ignores the namespace of cluster-scoped objects, as the API server
// and controller-runtime's cache reader do and the fake tracker does not:
// Karpenter's VolumeTopology gets a bound claim's PersistentVolume with the
// pod's namespace, and on the bare fake client that Get fails, so the pod
// would lose its volume's zone (and, left out of the Topology, its spread).
func newClient() client.Client {
	return fakecr.NewClientBuilder().
		WithScheme(scheme.Scheme).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				// The fake client's default RESTMapper knows no scopes; name them.
				switch obj.(type) {
				case *corev1.PersistentVolume, *corev1.Node, *corev1.Namespace, *storagev1.StorageClass, *storagev1.CSINode,
					*karpv1.NodePool, *karpv1.NodeClaim, *EC2NodeClass:
					key.Namespace = ""
				}
				return c.Get(ctx, key, obj, opts...)
			},
		}).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*corev1.Pod).Spec.NodeName}
		}).
		WithIndex(&corev1.Node{}, "spec.providerID", func(o client.Object) []string {
			return []string{o.(*corev1.Node).Spec.ProviderID}
		}).
		WithIndex(&karpv1.NodeClaim{}, "status.providerID", func(o client.Object) []string {
			return []string{o.(*karpv1.NodeClaim).Status.ProviderID}
		}).
		WithIndex(&storagev1.VolumeAttachment{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*storagev1.VolumeAttachment).Spec.NodeName}
		}).
		Build()
}

// nodeClaimFor is the NodeClaim (with the given true conditions) behind a
// managed node.
func nodeClaimFor(node *corev1.Node, conditions ...string) *karpv1.NodeClaim {
	nc := &karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:   node.Name,
			UID:    uid("nodeclaim", node.Name),
			Labels: lo.Assign(node.Labels),
		},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef: &karpv1.NodeClassReference{Group: EC2NodeClassGroupVersion.Group, Kind: "EC2NodeClass", Name: "default"},
		},
		Status: karpv1.NodeClaimStatus{
			ProviderID:  node.Spec.ProviderID,
			NodeName:    node.Name,
			Capacity:    node.Status.Capacity.DeepCopy(),
			Allocatable: node.Status.Allocatable.DeepCopy(),
		},
	}
	for _, t := range conditions {
		nc.StatusConditions().SetTrue(t)
	}
	return nc
}

// uid is scenario.UID: both runners derive the same UIDs.
func uid(parts ...string) types.UID { return scenario.UID(parts...) }

// convert turns Solve's truncated Results into the neutral result;
// canonical holds each claim's instance types in canonical price order.
func convert(r pscheduling.Results, canonical map[*pscheduling.NodeClaim][]*cloudprovider.InstanceType) *scenario.Result {
	out := &scenario.Result{}
	for _, nc := range r.NewNodeClaims {
		ordered := canonical[nc]
		c := scenario.NodeClaim{
			NodePool:      nc.NodePoolName,
			Zones:         inValues(nc.Requirements, corev1.LabelTopologyZone),
			CapacityTypes: inValues(nc.Requirements, karpv1.CapacityTypeLabelKey),
			Archs:         inValues(nc.Requirements, corev1.LabelArchStable),
		}
		for _, it := range ordered {
			c.InstanceTypes = append(c.InstanceTypes, it.Name)
			c.Prices = append(c.Prices, cheapest(it, nc.Requirements))
		}
		c.Launch = launch(ordered, nc.Requirements)
		for _, p := range nc.Pods {
			c.Pods = append(c.Pods, scenario.PodKey(p))
		}
		sort.Strings(c.Pods)
		out.NodeClaims = append(out.NodeClaims, c)
	}
	for _, en := range r.ExistingNodes {
		for _, p := range en.Pods {
			out.Existing = append(out.Existing, scenario.Placement{Pod: scenario.PodKey(p), Node: en.Name()})
		}
	}
	sort.Slice(out.Existing, func(i, j int) bool { return out.Existing[i].Pod < out.Existing[j].Pod })
	for p, err := range r.PodErrors {
		out.Errors = append(out.Errors, scenario.PodError{Pod: scenario.PodKey(p), Error: err.Error()})
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
	v := r.Values()
	sort.Strings(v)
	return v
}

func cheapest(it *cloudprovider.InstanceType, reqs scheduling.Requirements) float64 {
	best := math.MaxFloat64
	for _, o := range it.Offerings {
		if o.Available && reqs.IsCompatible(o.Requirements, scheduling.AllowUndefinedWellKnownLabels) && o.Price < best {
			best = o.Price
		}
	}
	return best
}

// launch applies the launch model documented on scenario.Offering: the AWS
// provider's capacity-type choice (reserved, then spot, else on-demand, each
// only when the claim allows it and some type offers it), then the cheapest
// compatible offering of that type.
func launch(its []*cloudprovider.InstanceType, reqs scheduling.Requirements) scenario.Offering {
	ct := karpv1.CapacityTypeOnDemand
	for _, want := range []string{karpv1.CapacityTypeReserved, karpv1.CapacityTypeSpot} {
		if !reqs.Get(karpv1.CapacityTypeLabelKey).Has(want) {
			continue
		}
		narrowed := scheduling.NewRequirements(reqs.Values()...)
		narrowed[karpv1.CapacityTypeLabelKey] = scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, want)
		if lo.ContainsBy(its, func(it *cloudprovider.InstanceType) bool {
			return len(it.Offerings.Available().Compatible(narrowed)) != 0
		}) {
			ct = want
			break
		}
	}
	var best scenario.Offering
	found := false
	for _, it := range its {
		for _, o := range it.Offerings.Available().Compatible(reqs) {
			if o.CapacityType() != ct {
				continue
			}
			cand := scenario.Offering{InstanceType: it.Name, Zone: o.Zone(), CapacityType: ct, Price: o.Price}
			// Strictly cheaper wins; equal price keeps the earlier type, then the lower zone.
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
