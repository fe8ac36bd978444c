//go:build genuine

// Package genuine runs the genuine cluster-autoscaler's scale-up on a
// ca-conformance scenario, wired the way a shipped cluster-autoscaler wires
// it, and reports the decision in the neutral scenario.Result so that
// diff.Compare can hold it against berth's (ca-conformance/README.md, "The
// genuine autoscaler").
//
// Only the scale-up half of one loop is run: the pod-list processors
// (expendable pods, pods that fit existing nodes), the --max-nodes-total
// check of the loop, then the scale-up orchestrator and the eventing status
// processor. The scale-down fields of the result stay unset (not compared).
package genuine

import (
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	"k8s.io/autoscaler/cluster-autoscaler/core/podlistprocessor"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup/orchestrator"
	catest "k8s.io/autoscaler/cluster-autoscaler/core/test"
	core_utils "k8s.io/autoscaler/cluster-autoscaler/core/utils"
	"k8s.io/autoscaler/cluster-autoscaler/estimator"
	"k8s.io/autoscaler/cluster-autoscaler/processors/binpacking"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupconfig"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"k8s.io/autoscaler/cluster-autoscaler/processors/pods"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	processorstest "k8s.io/autoscaler/cluster-autoscaler/processors/test"
	"k8s.io/autoscaler/cluster-autoscaler/resourcequotas"
	"k8s.io/autoscaler/cluster-autoscaler/simulator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/scheduling"
	kube_util "k8s.io/autoscaler/cluster-autoscaler/utils/kubernetes"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"

	"github.com/berth-sim/berth/ca-conformance/kube"
	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// Outcome is one genuine run.
type Outcome struct {
	Result *scenario.Result
	// Tie is set when the expander chain ended with more than one option
	// and chance picked one; TieOptions are those options (sorted by
	// group), the one taken steered by Pick.Group.
	Tie        bool
	TieOptions []scenario.Option
	// BalanceAlternatives is how many distinct splits balancing between
	// similar groups could make (1: no choice); the one taken steered by
	// Pick.Split.
	BalanceAlternatives int
}

// Pick steers the genuine autoscaler's two random choices to an answer
// being checked (README, "Ties"): Group is the group whose option to take
// when the expander chain ends in a tie among several (else the first by
// name), Split the split between similar groups to take when balancing
// could make several, as the TriggeredScaleUp message lists it ("[{group
// from->to (max: n)} ...]"; else one with the same sizes, else the first
// by text). The zero Pick takes the firsts.
type Pick struct {
	Group string
	Split string
}

// Options are cluster-autoscaler's options for sc: the scenario's flags,
// the shipped defaults of config/flags for the rest that scale-up reads.
func Options(sc *scenario.Scenario) config.AutoscalingOptions {
	so := sc.Options.Defaults()
	return config.AutoscalingOptions{
		ExpanderNames:                  so.Expander,
		EstimatorName:                  estimator.BinpackingEstimatorName,
		MaxNodesTotal:                  so.MaxNodesTotal,
		MaxCoresTotal:                  so.MaxCoresTotal,
		MaxMemoryTotal:                 so.MaxMemoryTotal.Value(),
		BalanceSimilarNodeGroups:       so.BalanceSimilarNodeGroups,
		BalancingExtraIgnoredLabels:    so.BalancingIgnoreLabels,
		ExpendablePodsPriorityCutoff:   int(*so.ExpendablePodsPriorityCutoff),
		MaxNodesPerScaleUp:             1000,
		MaxNodeGroupBinpackingDuration: 10 * time.Second,
		MaxBinpackingTime:              5 * time.Minute,
		ScaleUpFromZero:                true,
		ConfigNamespace:                "kube-system",
		NodeGroupSetRatios: config.NodeGroupDifferenceRatios{
			MaxCapacityMemoryDifferenceRatio: config.DefaultMaxCapacityMemoryDifferenceRatio,
			MaxAllocatableDifferenceRatio:    config.DefaultMaxAllocatableDifferenceRatio,
			MaxFreeDifferenceRatio:           config.DefaultMaxFreeDifferenceRatio,
		},
	}
}

// Run is the genuine autoscaler's scale-up on sc, its random choices
// made the first way (Pick{}).
func Run(sc *scenario.Scenario) (*Outcome, error) { return RunPick(sc, Pick{}) }

// RunPick is the genuine autoscaler's scale-up on sc with its random
// choices made by pick.
func RunPick(sc *scenario.Scenario, pick Pick) (*Outcome, error) { return run(sc, pick, false) }

// RunUnbounded is Run with the two wall-clock budgets of binpacking
// (--max-nodegroup-binpacking-duration per group,
// --max-binpacking-time per decision) set out of reach (README, "Speed"):
// CA's code is unchanged, but it estimates every group to the end however
// slow or loaded the host, as berth (virtual time only) always does. The
// node-count thresholds stay.
func RunUnbounded(sc *scenario.Scenario) (*Outcome, error) { return run(sc, Pick{}, true) }

// outOfReach is the wall-clock budget RunUnbounded gives binpacking.
const outOfReach = 100 * 365 * 24 * time.Hour

func run(sc *scenario.Scenario, pick Pick, unbounded bool) (*Outcome, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	objs := kube.Build(sc)
	options := Options(sc)
	if unbounded {
		options.MaxNodeGroupBinpackingDuration = outOfReach
		options.MaxBinpackingTime = outOfReach
	}
	now := time.Now() // the orchestrator reads the wall clock itself

	var changes []groupChange
	provider := testprovider.NewTestCloudProviderBuilder().WithOnScaleUp(func(group string, delta int) error {
		changes = append(changes, groupChange{group, delta})
		return nil
	}).Build()
	provider.SetResourceLimiter(cloudprovider.NewResourceLimiter(
		map[string]int64{cloudprovider.ResourceNameCores: 0, cloudprovider.ResourceNameMemory: 0},
		map[string]int64{cloudprovider.ResourceNameCores: options.MaxCoresTotal, cloudprovider.ResourceNameMemory: options.MaxMemoryTotal}))
	templates := map[string]*framework.NodeInfo{}
	for i := range sc.NodeGroups {
		g := &sc.NodeGroups[i]
		size, _ := sc.GroupSize(g.Name)
		provider.AddNodeGroup(g.Name, g.Min, g.Max, size)
		for _, n := range objs.GroupNodes[g.Name] {
			provider.AddNode(g.Name, n)
		}
		if t := objs.Templates[g.Name]; t != nil {
			templates[g.Name] = framework.NewTestNodeInfo(t.DeepCopy())
		}
	}
	provider.SetMachineTemplates(templates)

	procs, registry := processorstest.NewTestProcessors(options)
	// processors.DefaultProcessors: the shipped binary bounds the whole
	// decision's binpacking by --max-binpacking-time (5 min); the test
	// processors bound it by the per-group duration (10 s), which a loaded
	// host reaches on large scenarios and then cuts the options short.
	procs.BinpackingLimiter = binpacking.NewTimeLimiter(options.MaxBinpackingTime)
	// podlistprocessor.NewDefaultPodListProcessor's chain, less the
	// currently-drained-nodes step: it asks the scale-down actuator, which
	// this runner has none of, and no scenario has a node being drained.
	procs.PodListProcessor = pods.NewCombinedPodListProcessor([]pods.PodListProcessor{
		podlistprocessor.NewClearTPURequestsPodListProcessor(),
		podlistprocessor.NewFilterOutExpendablePodListProcessor(),
		podlistprocessor.NewFilterOutSchedulablePodListProcessor(scheduling.ScheduleAnywhere),
		podlistprocessor.NewFilterOutDaemonSetPodListProcessor(),
	})
	procs.ScaleUpStatusProcessor = status.NewDefaultScaleUpStatusProcessor()
	// builder/autoscaler.go: the AWS provider compares groups with the AWS
	// comparator (its ignored labels plus --balancing-ignore-label).
	// The balancer wraps it to make its order-dependent choice by pick.
	bal := &balancer{prefer: pick.Split, BalancingNodeGroupSetProcessor: &nodegroupset.BalancingNodeGroupSetProcessor{
		Comparator: nodegroupset.CreateAwsNodeInfoComparator(options.BalancingExtraIgnoredLabels, options.NodeGroupSetRatios),
	}}
	procs.NodeGroupSetProcessor = bal

	listers := kube_util.NewListerRegistry(nil, nil, kube_util.NewTestPodLister(append(append([]*corev1.Pod{}, objs.Bound...), objs.Pending...)), nil, nil, nil, nil, nil, nil)
	actx, err := catest.NewScaleTestAutoscalingContext(options, &fake.Clientset{}, listers, provider, nil, nil, registry)
	if err != nil {
		return nil, err
	}
	rec := &recorder{}
	actx.Recorder = rec

	// static_autoscaler.go: expendable bound pods leave the snapshot.
	bound := core_utils.FilterOutExpendablePods(objs.Bound, options.ExpendablePodsPriorityCutoff)
	if err := actx.ClusterSnapshot.SetClusterState(objs.Nodes, bound, nil, nil); err != nil {
		return nil, err
	}
	if aerr := actx.TemplateNodeInfoRegistry.Recompute(&actx, objs.Nodes, []*appsv1.DaemonSet{}, taints.TaintConfig{}, now); aerr != nil {
		return nil, aerr
	}
	nodeInfos := actx.TemplateNodeInfoRegistry.GetNodeInfos()

	csr := clusterstate.NewClusterStateRegistry(provider, actx.LogRecorder, catest.NewBackoff(),
		nodegroupconfig.NewDefaultNodeGroupConfigProcessor(options.NodeGroupDefaults), actx.TemplateNodeInfoRegistry,
		clusterstate.WithScaleStateNotifier(procs.ScaleStateNotifier))
	if err := csr.UpdateNodes(objs.Nodes, now); err != nil {
		return nil, err
	}

	// static_autoscaler.go RunOnce: every upcoming node (asked for, not
	// registered or not ready) joins the snapshot as a sanitized copy of
	// its group's template before the pod-list processors run, so pending
	// pods that fit one are filtered out. CA walks the counts map; here
	// the groups go in scenario order.
	upcoming, _ := csr.GetUpcomingNodes()
	for _, g := range sc.NodeGroups {
		tmpl := nodeInfos[g.Name]
		if tmpl == nil {
			continue
		}
		for i := 0; i < upcoming[g.Name]; i++ {
			ni, err := simulator.SanitizedNodeInfo(tmpl, fmt.Sprintf("upcoming-%d", i))
			if err != nil {
				return nil, err
			}
			if err := actx.ClusterSnapshot.AddNodeInfo(ni); err != nil {
				return nil, err
			}
		}
	}

	// core/autoscaler.go: the shipped estimator is bounded.
	eb, err := estimator.NewEstimatorBuilder(options.EstimatorName,
		estimator.NewThresholdBasedEstimationLimiter([]estimator.Threshold{
			estimator.NewStaticThreshold(options.MaxNodesPerScaleUp, options.MaxNodeGroupBinpackingDuration),
			estimator.NewSngCapacityThreshold(),
			estimator.NewClusterCapacityThreshold(),
		}),
		estimator.NewDecreasingPodOrderer(), nil, options.FastpathBinpackingEnabled)
	if err != nil {
		return nil, err
	}
	quotas := resourcequotas.NewTrackerFactory(resourcequotas.TrackerOptions{
		QuotaProvider:            resourcequotas.NewCombinedQuotasProvider([]resourcequotas.Provider{resourcequotas.NewCloudQuotasProvider(provider)}),
		CustomResourcesProcessor: procs.CustomResourcesProcessor,
		NodeFilter:               resourcequotas.NewCombinedNodeFilter([]resourcequotas.NodeFilter{core_utils.VirtualKubeletNodeFilter{}}),
	})
	strategy, err := newStrategy(strings.Split(options.ExpanderNames, ","), sc.Options.Defaults().Priorities, options.ConfigNamespace, rec, pick.Group)
	if err != nil {
		return nil, err
	}
	actx.ExpanderStrategy = strategy

	o := orchestrator.New()
	o.Initialize(&actx, procs, csr, eb, taints.TaintConfig{}, quotas)

	pending, err := procs.PodListProcessor.Process(&actx, objs.Pending)
	if err != nil {
		return nil, err
	}
	var st *status.ScaleUpStatus
	var scaleErr error
	switch {
	case len(pending) == 0:
		st = &status.ScaleUpStatus{Result: status.ScaleUpNotNeeded}
	case options.MaxNodesTotal > 0 && readyCount(objs.Nodes) >= options.MaxNodesTotal:
		// static_autoscaler.go checks the cap before the orchestrator.
		st = &status.ScaleUpStatus{Result: status.ScaleUpLimitedByMaxNodesTotal}
		for _, p := range pending {
			st.PodsRemainUnschedulable = append(st.PodsRemainUnschedulable, status.NoScaleUpInfo{Pod: p})
		}
	default:
		var aerr error
		// static_autoscaler.go hands the orchestrator every node of the
		// snapshot, the injected upcoming ones included: the estimator's
		// cluster threshold, the --max-nodes-total cap and the resource
		// quotas count them.
		infos, lerr := actx.ClusterSnapshot.ListNodeInfos()
		if lerr != nil {
			return nil, lerr
		}
		all := make([]*corev1.Node, 0, len(infos))
		for _, ni := range infos {
			all = append(all, ni.Node())
		}
		st, aerr = scaleUp(o, pending, all, nodeInfos)
		if aerr != nil {
			scaleErr = aerr
		}
	}
	procs.ScaleUpStatusProcessor.Process(&actx, st)

	res := &scenario.Result{}
	fill(res, sc, st, changes, strategy.seen, rec, scaleErr)
	res.Normalize()
	res.Chosen = strategy.chosen
	out := &Outcome{Result: res, Tie: len(strategy.left) > 0, BalanceAlternatives: max(bal.alternatives, 1)}
	for _, o := range strategy.left {
		out.TieOptions = append(out.TieOptions, scenario.Option{Group: o.group, Nodes: o.nodes, Pods: o.pods})
	}
	return out, nil
}

// scaleUp calls the orchestrator, turning a typed nil error into nil.
func scaleUp(o *orchestrator.ScaleUpOrchestrator, pending []*corev1.Pod, nodes []*corev1.Node, nodeInfos map[string]*framework.NodeInfo) (*status.ScaleUpStatus, error) {
	st, aerr := o.ScaleUp(pending, nodes, []*appsv1.DaemonSet{}, nodeInfos, false)
	if aerr != nil {
		return st, aerr
	}
	return st, nil
}

type groupChange struct {
	group string
	delta int
}

func readyCount(nodes []*corev1.Node) int {
	n := 0
	for _, node := range nodes {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// fill turns the status, resizes, expander input and events into the
// neutral result, with the same field meanings as berthrun's fill.
func fill(res *scenario.Result, sc *scenario.Scenario, st *status.ScaleUpStatus, changes []groupChange, seen []optionSeen, rec *recorder, scaleErr error) {
	res.ScaleUp = []scenario.GroupChange{}
	total := map[string]int{}
	var order []string
	for _, c := range changes {
		if _, ok := total[c.group]; !ok {
			order = append(order, c.group)
		}
		total[c.group] += c.delta
	}
	for _, g := range order {
		from, _ := sc.GroupSize(g)
		res.ScaleUp = append(res.ScaleUp, scenario.GroupChange{Group: g, From: from, To: from + total[g]})
	}
	for _, s := range seen {
		res.Options = append(res.Options, scenario.Option{Group: s.group, Nodes: s.nodes, Pods: s.pods})
	}
	res.Triggered, res.Remaining, res.Awaiting = []string{}, []string{}, []string{}
	if len(res.ScaleUp) > 0 {
		res.Triggered = names(st.PodsTriggeredScaleUp)
	}
	for _, r := range st.PodsRemainUnschedulable {
		res.Remaining = append(res.Remaining, r.Pod.Name)
	}
	res.Awaiting = append(res.Awaiting, names(st.PodsAwaitEvaluation)...)
	if scaleErr != nil {
		s := scaleErr.Error()
		res.Error = &s
	}
	res.NotTriggerScaleUp = map[string]string{}
	res.TriggeredScaleUp = map[string]string{}
	for _, e := range rec.events {
		switch e.reason {
		case "NotTriggerScaleUp":
			res.NotTriggerScaleUp[e.pod] = e.message
		case "TriggeredScaleUp":
			res.TriggeredScaleUp[e.pod] = e.message
		}
	}
}

func names(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// Describe is a one-line summary for logs.
func (o *Outcome) Describe() string {
	return fmt.Sprintf("scaleUp=%v triggered=%d remaining=%d awaiting=%d tie=%d balance=%d",
		o.Result.ScaleUp, len(o.Result.Triggered), len(o.Result.Remaining), len(o.Result.Awaiting), len(o.TieOptions), o.BalanceAlternatives)
}
