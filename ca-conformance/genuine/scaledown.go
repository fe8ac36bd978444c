//go:build genuine

package genuine

import (
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/eligibility"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/unremovable"
	catest "k8s.io/autoscaler/cluster-autoscaler/core/test"
	core_utils "k8s.io/autoscaler/cluster-autoscaler/core/utils"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodes"
	processorstest "k8s.io/autoscaler/cluster-autoscaler/processors/test"
	"k8s.io/autoscaler/cluster-autoscaler/simulator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/drainability/rules"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/options"
	kube_util "k8s.io/autoscaler/cluster-autoscaler/utils/kubernetes"

	"github.com/berth-sim/berth/ca-conformance/kube"
	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// unremovableNames are simulator.UnremovableReason's constant names, in
// their iota order (the type has no String method).
var unremovableNames = []string{
	"NoReason", "ScaleDownDisabledAnnotation", "ScaleDownUnreadyDisabled", "NotAutoscaled",
	"NotUnneededLongEnough", "NotUnreadyLongEnough", "NodeGroupMinSizeReached",
	"NodeGroupMaxDeletionCountReached", "AtomicScaleDownFailed", "MinimalResourceLimitExceeded",
	"CurrentlyBeingDeleted", "NotUnderutilized", "NotUnneededOtherReason", "RecentlyUnremovable",
	"NoPlaceToMovePods", "BlockedByPod", "UnexpectedError", "NoNodeInfo", "BlockedByOnCompletionPod",
}

// ScaleDownOptions are cluster-autoscaler's options for sc's scale-down:
// the scenario's flags, the shipped defaults for the rest.
func ScaleDownOptions(sc *scenario.Scenario) config.AutoscalingOptions {
	so := sc.Options.Defaults()
	o := Options(sc)
	o.NodeGroupDefaults = config.NodeGroupAutoscalingOptions{
		ScaleDownUtilizationThreshold:    so.ScaleDownUtilizationThreshold,
		ScaleDownGpuUtilizationThreshold: 0.5,
		ScaleDownUnneededTime:            10 * time.Minute,
		ScaleDownUnreadyTime:             20 * time.Minute,
	}
	o.ScaleDownEnabled = true
	o.ScaleDownUnreadyEnabled = true
	o.SkipNodesWithSystemPods = *so.SkipNodesWithSystemPods
	o.SkipNodesWithLocalStorage = *so.SkipNodesWithLocalStorage
	o.SkipNodesWithCustomControllerPods = true
	o.UnremovableNodeRecheckTimeout = 5 * time.Minute
	o.ScaleDownSimulationTimeout = outOfReach
	// --blocking-system-pod-distruption-timeout's default (config/flags).
	o.BspDisruptionTimeout = time.Hour
	return o
}

// ScaleDown is the genuine autoscaler's scale-down planning on sc, one
// loop's worth (README, "Scale-down"): the pre-filtering node processor
// (groups above their minimum size), the eligibility checker
// (scale-down-disabled annotation, utilization at or below the
// threshold) and the removal simulator with its successful simulations
// persisted, candidates in node-name order, as the planner's
// categorizeNodes walks them (destinations lose each node found
// removable, the remaining-PDB tracker loses its pods). The result holds
// only Unneeded and Unremovable (node → reason; BlockedByPod as
// "BlockedByPod/<drain reason>").
func ScaleDown(sc *scenario.Scenario) (*scenario.Result, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	objs := kube.Build(sc)
	opts := ScaleDownOptions(sc)
	// The scenario happens at kube.Epoch (its bound pods were created an
	// hour before): the drain rules compare pod ages with this instant.
	now := kube.Epoch

	provider := testprovider.NewTestCloudProviderBuilder().Build()
	for i := range sc.NodeGroups {
		g := &sc.NodeGroups[i]
		size, _ := sc.GroupSize(g.Name)
		provider.AddNodeGroup(g.Name, g.Min, g.Max, size)
		for _, n := range objs.GroupNodes[g.Name] {
			provider.AddNode(g.Name, n)
		}
	}
	procs, registry := processorstest.NewTestProcessors(opts)
	listers, err := controllerListers(objs.Bound)
	if err != nil {
		return nil, err
	}
	actx, err := catest.NewScaleTestAutoscalingContext(opts, &fake.Clientset{}, listers, provider, nil, nil, registry)
	if err != nil {
		return nil, err
	}
	bound := core_utils.FilterOutExpendablePods(objs.Bound, opts.ExpendablePodsPriorityCutoff)
	// A node's pods reach the snapshot in the pod lister's order, which
	// an informer cache leaves to chance; the drain rules name the first
	// blocking pod in that order. The runner takes one possible order,
	// by namespace and name (berth's).
	sort.SliceStable(bound, func(i, j int) bool {
		if bound[i].Namespace != bound[j].Namespace {
			return bound[i].Namespace < bound[j].Namespace
		}
		return bound[i].Name < bound[j].Name
	})
	if err := actx.ClusterSnapshot.SetClusterState(objs.Nodes, bound, nil, nil); err != nil {
		return nil, err
	}
	if err := actx.RemainingPdbTracker.SetPdbs(objs.PDBs); err != nil {
		return nil, err
	}

	all := append([]*corev1.Node{}, objs.Nodes...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	pre := nodes.NewPreFilteringScaleDownNodeProcessor()
	cands, aerr := pre.GetScaleDownCandidates(&actx, all)
	if aerr != nil {
		return nil, aerr
	}
	dests := map[string]bool{}
	for _, n := range all {
		dests[n.Name] = true
	}

	res := &scenario.Result{Unneeded: []string{}, Unremovable: map[string]string{}}
	checker := eligibility.NewChecker(procs.NodeGroupConfigProcessor)
	names, _, ineligible := checker.FilterOutUnremovable(&actx, cands, now, unremovable.NewNodes())
	for _, u := range ineligible {
		res.Unremovable[u.Node.Name] = reasonName(*u)
	}
	delOpts := options.NewNodeDeleteOptions(opts)
	rs := simulator.NewRemovalSimulator(listers, actx.ClusterSnapshot, delOpts, rules.Default(delOpts), true)
	for _, name := range names {
		removable, unrem := rs.SimulateNodeRemoval(name, dests, now, actx.RemainingPdbTracker)
		if removable != nil {
			delete(dests, name)
			actx.RemainingPdbTracker.RemovePods(removable.PodsToReschedule)
			res.Unneeded = append(res.Unneeded, name)
		}
		if unrem != nil {
			res.Unremovable[name] = reasonName(*unrem)
		}
	}
	res.Normalize()
	return res, nil
}

// controllerListers serves the controllers the bound pods name as
// owners, as a cluster's informers would (the drain rules look them up;
// a missing one blocks the pod with ControllerNotFound). The scenario
// format carries no controller objects, so each exists with its pods.
func controllerListers(pods []*corev1.Pod) (kube_util.ListerRegistry, error) {
	var dss []*appsv1.DaemonSet
	var jobs []*batchv1.Job
	var rss []*appsv1.ReplicaSet
	var sss []*appsv1.StatefulSet
	seen := map[string]bool{}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		key := ref.Kind + "/" + p.Namespace + "/" + ref.Name
		if seen[key] {
			continue
		}
		seen[key] = true
		meta := metav1.ObjectMeta{Namespace: p.Namespace, Name: ref.Name, UID: ref.UID}
		switch ref.Kind {
		case "DaemonSet":
			dss = append(dss, &appsv1.DaemonSet{ObjectMeta: meta})
		case "Job":
			jobs = append(jobs, &batchv1.Job{ObjectMeta: meta})
		case "ReplicaSet":
			rss = append(rss, &appsv1.ReplicaSet{ObjectMeta: meta})
		case "StatefulSet":
			sss = append(sss, &appsv1.StatefulSet{ObjectMeta: meta})
		}
	}
	ds, err := kube_util.NewTestDaemonSetLister(dss)
	if err != nil {
		return nil, err
	}
	rc, err := kube_util.NewTestReplicationControllerLister(nil)
	if err != nil {
		return nil, err
	}
	jl, err := kube_util.NewTestJobLister(jobs)
	if err != nil {
		return nil, err
	}
	rl, err := kube_util.NewTestReplicaSetLister(rss)
	if err != nil {
		return nil, err
	}
	sl, err := kube_util.NewTestStatefulSetLister(sss)
	if err != nil {
		return nil, err
	}
	return kube_util.NewListerRegistry(nil, nil, kube_util.NewTestPodLister(pods), nil, ds, rc, jl, rl, sl), nil
}

func reasonName(u simulator.UnremovableNode) string {
	name := "UnremovableReason(?)"
	if int(u.Reason) < len(unremovableNames) {
		name = unremovableNames[u.Reason]
	}
	if u.Reason == simulator.BlockedByPod && u.BlockingPod != nil {
		name += "/" + u.BlockingPod.Reason.String()
	}
	return name
}
