package why

import (
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	autoscaler "github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/autoscaler/nodegroups"
	"github.com/berth-sim/berth/internal/autoscaler/scaleup"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/fargate"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioner"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// PoolVerdict is what one NodePool (or v1alpha5 Provisioner) would do
// for the pod on its own.
type PoolVerdict struct {
	Pool string `json:"pool"`
	Kind string `json:"kind"`
	// Outcome is "launch" (a new NodeClaim), "in-flight" (the pod waits
	// for a node or NodeClaim already coming), "no" or "not ready".
	Outcome string `json:"outcome"`
	// Message is Karpenter's own text: the solve's error for "no", the
	// pool's readiness for "not ready".
	Message string `json:"message,omitempty"`
	// InstanceTypes are the new NodeClaim's first options, cheapest first.
	InstanceTypes []string `json:"instanceTypes,omitempty"`
	// Target names the in-flight node or NodeClaim.
	Target string `json:"target,omitempty"`
	// Nearest are, when no instance type has enough resources, the pool's
	// types closest to the pod's requests.
	Nearest []string `json:"nearest,omitempty"`
}

// GroupVerdict is cluster-autoscaler's answer for one node group alone.
type GroupVerdict struct {
	Group string `json:"group"`
	// Outcome is "scale-up", "fits elsewhere" or "no".
	Outcome string `json:"outcome"`
	// Message is the NotTriggerScaleUp reasons, or the ScaleUpInfo.
	Message string `json:"message,omitempty"`
}

// ProfileVerdict is one Fargate profile's answer.
type ProfileVerdict struct {
	Profile string `json:"profile"`
	// Outcome is "selected", "not selected" or "not supported".
	Outcome string `json:"outcome"`
	Message string `json:"message,omitempty"`
}

// shownInstanceTypes caps the instance types listed for a new NodeClaim.
const shownInstanceTypes = 5

// karpenterLayer solves the pod alone against each pool in turn, with
// the cluster's nodes and in-flight NodeClaims, as a provisioning round
// would (docs/karpenter-provisioning.md). Nothing is written: the solve's
// placeholder counter is a copy.
func karpenterLayer(s *cluster.State, pod *corev1.Pod) ([]PoolVerdict, error) {
	all := pools.List(s)
	if len(all) == 0 {
		return nil, nil
	}
	if err := provisioner.Validate(s, pod); err != nil {
		// Karpenter ignores such a pod (it only logs "ignoring pod").
		return []PoolVerdict{{Pool: "*", Kind: all[0].Kind, Outcome: "no", Message: "Karpenter ignores the pod: " + err.Error()}}, nil
	}
	var out []PoolVerdict
	for _, p := range all {
		v := PoolVerdict{Pool: p.Name, Kind: p.Kind}
		if p.NotReady != "" {
			v.Outcome, v.Message = "not ready", p.NotReady
			out = append(out, v)
			continue
		}
		res, err := solveAlone(s, pod, p.Name, nil)
		if err != nil {
			return nil, err
		}
		describeSolve(&v, res, pod)
		if v.Outcome == "no" && strings.Contains(v.Message, "enough resources") {
			v.Nearest = nearestTypes(s, p, pod)
		}
		out = append(out, v)
	}
	return out, nil
}

// solveAlone runs the provisioning solve for pod with only the named pool
// (all ready pools when pool is ""); edit, when set, changes the solver's
// input first (a raised limit).
func solveAlone(s *cluster.State, pod *corev1.Pod, pool string, edit func(*provisioning.Input)) (*provisioning.Results, error) {
	_, in := provisioner.Prepare(s, pools.NewCatalog(), []*corev1.Pod{pod})
	if in == nil {
		return nil, nil
	}
	if pool != "" {
		var keep []*provisioning.NodePool
		for _, np := range in.NodePools {
			if np.Name == pool {
				keep = append(keep, np)
			}
		}
		in.NodePools = keep
	}
	seq := s.Karpenter.HostnameSeq
	in.HostnameSeq = &seq
	if edit != nil {
		edit(in)
	}
	return provisioning.Solve(in)
}

func describeSolve(v *PoolVerdict, res *provisioning.Results, pod *corev1.Pod) {
	key := cluster.Key(pod.Namespace, pod.Name)
	switch {
	case res == nil:
		v.Outcome, v.Message = "no", "nothing to solve"
	case res.PodErrors[key] != nil:
		v.Outcome, v.Message = "no", res.PodErrors[key].Error()
	case len(res.NewNodeClaims) > 0:
		v.Outcome = "launch"
		v.InstanceTypes = instanceTypeNames(res.NewNodeClaims[0])
	case len(res.ExistingNodes) > 0:
		n := res.ExistingNodes[0].Node
		v.Outcome, v.Target = "in-flight", n.Name
		if n.NodeClaimName != "" {
			v.Target = "nodeclaim/" + n.NodeClaimName
		}
	default:
		for _, sk := range res.SkippedNodePools {
			if sk.Name == v.Pool {
				v.Outcome, v.Message = "no", "NodePool requirements filtered out all compatible available instance types"
				return
			}
		}
		v.Outcome = "no"
	}
}

// instanceTypeNames lists the claim's options cheapest first (the
// cheapest available offering of each), as Karpenter's launch prefers them.
func instanceTypeNames(nc *provisioning.NewNodeClaim) []string {
	its := byPrice(nc.InstanceTypes)
	var out []string
	for i, it := range its {
		if i == shownInstanceTypes {
			out = append(out, fmt.Sprintf("and %d more", len(its)-shownInstanceTypes))
			break
		}
		out = append(out, it.Name)
	}
	return out
}

func byPrice(list instancetype.InstanceTypes) []*instancetype.InstanceType {
	its := append([]*instancetype.InstanceType(nil), list...)
	price := func(it *instancetype.InstanceType) float64 {
		best := math.Inf(1)
		for _, o := range it.Offerings {
			if o.Available && o.Price < best {
				best = o.Price
			}
		}
		return best
	}
	sort.SliceStable(its, func(a, b int) bool {
		pa, pb := price(its[a]), price(its[b])
		if pa != pb {
			return pa < pb
		}
		return its[a].Name < its[b].Name
	})
	return its
}

// shownNearest is how many instance types a "none fits" answer names.
const shownNearest = 3

// nearestTypes names the pool's instance types (those its requirements
// allow) that come closest to the
// pod's requests: by the smallest share of the request met over the
// resources the pod asks for, with their allocatable.
func nearestTypes(s *cluster.State, p *pools.Pool, pod *corev1.Pod) []string {
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	names := cluster.SortedKeys(req)
	type scored struct {
		it    *instancetype.InstanceType
		share float64
	}
	var list []scored
	for _, it := range poolTypes(s, p) {
		alloc := it.Allocatable()
		share := math.Inf(1)
		for _, rn := range names {
			want := req[rn]
			if want.IsZero() {
				continue
			}
			have := alloc[rn]
			if f := have.AsApproximateFloat64() / want.AsApproximateFloat64(); f < share {
				share = f
			}
		}
		list = append(list, scored{it, share})
	}
	sort.SliceStable(list, func(a, b int) bool {
		if list[a].share != list[b].share {
			return list[a].share > list[b].share
		}
		return list[a].it.Name < list[b].it.Name
	})
	var out []string
	for i, sc := range list {
		if i == shownNearest {
			break
		}
		alloc := sc.it.Allocatable()
		var parts []string
		for _, rn := range names {
			q := alloc[rn]
			parts = append(parts, fmt.Sprintf("%s %s", rn, q.String()))
		}
		out = append(out, fmt.Sprintf("%s (allocatable %s)", sc.it.Name, strings.Join(parts, ", ")))
	}
	return out
}

// poolTypes are the instance types the pool's requirements allow.
func poolTypes(s *cluster.State, p *pools.Pool) []*instancetype.InstanceType {
	pools.NewCatalog().Resolve(s, []*pools.Pool{p})
	poolReqs := scheduling.NewNodeSelectorRequirementsWithMinValues(p.Solver.Requirements...)
	var out []*instancetype.InstanceType
	for _, it := range p.Solver.InstanceTypes {
		if it.Requirements.Intersects(poolReqs) == nil {
			out = append(out, it)
		}
	}
	return out
}

// caGroups is the cluster's cluster-autoscaler groups as its loop builds
// them (docs/cluster-autoscaler.md#scale-up), nil without an autoscaler.
func caGroups(s *cluster.State) ([]scaleup.Group, bool, error) {
	opts, ok, err := autoscaler.Options(s)
	if !ok || err != nil {
		return nil, false, err
	}
	found, _ := nodegroups.Discover(s, opts)
	return autoscaler.PlanGroups(s, found, opts), true, nil
}

// autoscalerLayer asks cluster-autoscaler's planner about the pod with
// each group alone, so every group gets its own reason in CA's words.
func autoscalerLayer(s *cluster.State, pod *corev1.Pod) ([]GroupVerdict, error) {
	groups, ok, err := caGroups(s)
	if !ok || err != nil {
		return nil, err
	}
	opts, _, _ := autoscaler.Options(s)
	var out []GroupVerdict
	for _, g := range groups {
		res, err := scaleup.Plan(scaleup.Input{State: s, Pending: []*corev1.Pod{pod}, Groups: []scaleup.Group{g}, Options: opts,
			KubernetesVersion: s.Info.KubernetesVersion})
		if err != nil {
			return nil, err
		}
		out = append(out, groupVerdict(g.Name, res))
	}
	return out, nil
}

func groupVerdict(name string, res *scaleup.Result) GroupVerdict {
	v := GroupVerdict{Group: name, Outcome: "no"}
	switch {
	case len(res.Increases) > 0:
		v.Outcome, v.Message = "scale-up", scaleup.TriggeredMessage(res.Increases)
	case len(res.FittingElsewhere) > 0:
		v.Outcome, v.Message = "fits elsewhere", "the pod fits an existing or upcoming node"
	case len(res.NoScaleUp) > 0:
		v.Message = res.NoScaleUp[0].Message
	}
	return v
}

// fargateLayer says, per profile, whether it selects the pod and whether
// Fargate can run it (docs/fargate.md).
func fargateLayer(s *cluster.State, pod *corev1.Pod) []ProfileVerdict {
	profiles := fargate.Profiles(s)
	if len(profiles) == 0 {
		return nil
	}
	chosen := fargate.Choose(profiles, pod.Namespace, pod.Labels)
	var out []ProfileVerdict
	for _, p := range profiles {
		v := ProfileVerdict{Profile: p.Name}
		switch {
		case chosen == nil || chosen.Name != p.Name:
			v.Outcome = "not selected"
			v.Message = notSelected(p, pod, chosen)
		case pod.Spec.SchedulerName != fargate.SchedulerName:
			v.Outcome = "selected"
			v.Message = "the profile matches, but the pod was created without it: the Fargate webhook routes pods at creation; recreate the pod"
		default:
			v.Outcome = "selected"
			if msg := fargate.Unsupported(s, pod); msg != "" {
				v.Outcome, v.Message = "not supported", msg
			}
		}
		out = append(out, v)
	}
	return out
}

func notSelected(p *cluster.FargateProfile, pod *corev1.Pod, chosen *cluster.FargateProfile) string {
	if fargate.ProfileMatches(p, pod.Namespace, pod.Labels) {
		if chosen != nil {
			return fmt.Sprintf("matches, but profile %q is chosen first", chosen.Name)
		}
		return fmt.Sprintf("matches, but the pod's %s label names another profile", fargate.LabelProfile)
	}
	var sels []string
	for _, sel := range p.Selectors {
		t := "namespace " + sel.Namespace
		if len(sel.Labels) > 0 {
			var ls []string
			for _, k := range cluster.SortedKeys(sel.Labels) {
				ls = append(ls, k+"="+sel.Labels[k])
			}
			t += " with labels " + strings.Join(ls, ",")
		}
		sels = append(sels, t)
	}
	return "no selector matches (" + strings.Join(sels, "; ") + ")"
}
