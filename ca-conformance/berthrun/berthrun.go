// Package berthrun is berth's side of the cluster-autoscaler conformance
// test: one autoscaler decision (a scale-up for the pending pods, then a
// scale-down pass) on a scenario, computed in-process by berth's
// internal/autoscaler/scaleup.Plan and scaledown.Unneeded on the objects
// ca-conformance/kube builds.
package berthrun

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/ca-conformance/kube"
	"github.com/berth-sim/berth/ca-conformance/scenario"
	"github.com/berth-sim/berth/internal/autoscaler/config"
	"github.com/berth-sim/berth/internal/autoscaler/scaledown"
	"github.com/berth-sim/berth/internal/autoscaler/scaleup"
)

// Runner decides on a scenario.
type Runner interface {
	Run(sc *scenario.Scenario) (*scenario.Result, error)
}

// ErrNotWired was the stub's answer before berth's autoscaler was wired;
// kept so callers that test for it still compile.
var ErrNotWired = errors.New("berth's cluster-autoscaler is not wired into ca-conformance yet")

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(sc *scenario.Scenario) (*scenario.Result, error)

// Run calls f.
func (f RunnerFunc) Run(sc *scenario.Scenario) (*scenario.Result, error) { return f(sc) }

// Default is berth's runner.
var Default Runner = RunnerFunc(Run)

// Seed is the seed of berth's random tie-break; scenarios whose answer
// depends on it are not comparable, whatever the seed.
const Seed = 1

// Options are berth's flags for sc's options (CA's defaults for the rest).
func Options(sc *scenario.Scenario) config.Options {
	so := sc.Options.Defaults()
	o := config.Defaults()
	o.Expanders = strings.Split(so.Expander, ",")
	o.BalanceSimilarNodeGroups = so.BalanceSimilarNodeGroups
	o.BalancingIgnoreLabels = so.BalancingIgnoreLabels
	o.MaxNodesTotal = so.MaxNodesTotal
	o.CoresMax = so.MaxCoresTotal
	o.ScaleDownUtilizationThreshold = so.ScaleDownUtilizationThreshold
	o.SkipNodesWithSystemPods = *so.SkipNodesWithSystemPods
	o.SkipNodesWithLocalStorage = *so.SkipNodesWithLocalStorage
	o.ExpendablePodsPriorityCutoff = int(*so.ExpendablePodsPriorityCutoff)
	return o
}

// Priorities is the priority expander ConfigMap's "priorities" value.
func Priorities(p map[int][]string) string {
	levels := make([]int, 0, len(p))
	for l := range p {
		levels = append(levels, l)
	}
	sort.Ints(levels)
	var b strings.Builder
	for _, l := range levels {
		fmt.Fprintf(&b, "%d:\n", l)
		for _, re := range p[l] {
			fmt.Fprintf(&b, "  - %s\n", strconv.Quote(re))
		}
	}
	return b.String()
}

// Run is berth's autoscaler on sc.
func Run(sc *scenario.Scenario) (*scenario.Result, error) {
	in, objs, err := PlanInput(sc)
	if err != nil {
		return nil, err
	}
	plan, err := scaleup.Plan(in)
	if err != nil {
		return nil, err
	}
	res := &scenario.Result{}
	fill(res, plan, objs.Pending)

	groups := in.Groups
	opts := in.Options
	var sdGroups []scaledown.Group
	for _, g := range groups {
		sg := scaledown.Group{Name: g.Name, MinSize: g.MinSize, Target: g.Target}
		for _, n := range objs.GroupNodes[g.Name] {
			sg.Nodes = append(sg.Nodes, n.Name)
		}
		sdGroups = append(sdGroups, sg)
	}
	cands, stay, err := scaledown.Unneeded(scaledown.Input{
		Nodes: objs.Nodes, Pods: objs.Bound, PDBs: objs.PDBs, Groups: sdGroups, Options: opts,
	})
	if err != nil {
		return nil, err
	}
	res.Unneeded = []string{}
	for _, c := range cands {
		res.Unneeded = append(res.Unneeded, c.Node)
	}
	res.Unremovable = map[string]string{}
	for _, u := range stay {
		r := u.Reason
		if u.Blocking != nil {
			// As the genuine runner names it: the drain rule that blocked.
			r += "/" + u.Blocking.Reason
		}
		res.Unremovable[u.Node] = r
	}
	res.Normalize()
	return res, nil
}

// PlanInput is sc as berth's scale-up input, with the objects it was built
// from. The side-by-side benchmark times scaleup.Plan on it alone, the part
// the genuine runner's orchestrator does.
func PlanInput(sc *scenario.Scenario) (scaleup.Input, *kube.Objects, error) {
	if err := sc.Validate(); err != nil {
		return scaleup.Input{}, nil, err
	}
	objs := kube.Build(sc)
	opts := Options(sc)
	so := sc.Options.Defaults()
	var groups []scaleup.Group
	for i := range sc.NodeGroups {
		g := &sc.NodeGroups[i]
		size, _ := sc.GroupSize(g.Name)
		sg := scaleup.Group{Name: g.Name, MinSize: g.Min, MaxSize: g.Max, Target: size,
			Registered: len(objs.GroupNodes[g.Name])}
		sg.Template, sg.TemplatePods = template(g.Name, objs)
		groups = append(groups, sg)
	}
	return scaleup.Input{
		Nodes: objs.Nodes, Pods: objs.Bound, Pending: objs.Pending, Groups: groups,
		Options: opts, Priorities: Priorities(so.Priorities), Seed: Seed,
		MemoryMaxBytes: so.MaxMemoryTotal.Value(),
	}, objs, nil
}

// template is the group's template as cluster-autoscaler's node-info
// provider picks it: a copy of the group's first Ready node (with the
// DaemonSet and mirror pods that would start on a fresh one), else the
// declared scale-from-zero template.
func template(group string, objs *kube.Objects) (*corev1.Node, []*corev1.Pod) {
	for _, n := range objs.GroupNodes[group] {
		if !ready(n) {
			continue
		}
		name := "template-node-for-" + group
		t := n.DeepCopy()
		t.Name, t.UID = name, ""
		t.Labels[corev1.LabelHostname] = name
		var pods []*corev1.Pod
		for _, p := range objs.Bound {
			if p.Spec.NodeName != n.Name || !freshNodePod(p) {
				continue
			}
			cp := p.DeepCopy()
			cp.Name, cp.UID = p.Name+"-"+name, ""
			cp.Spec.NodeName = name
			pods = append(pods, cp)
		}
		return t, pods
	}
	if t := objs.Templates[group]; t != nil {
		return t.DeepCopy(), nil
	}
	return nil, nil
}

func freshNodePod(p *corev1.Pod) bool {
	if _, ok := p.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return true
	}
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet"
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// fill turns berth's plan into the neutral result.
func fill(res *scenario.Result, plan *scaleup.Result, pending []*corev1.Pod) {
	res.ScaleUp = []scenario.GroupChange{}
	for _, inc := range plan.Increases {
		res.ScaleUp = append(res.ScaleUp, scenario.GroupChange{Group: inc.Group, From: inc.From, To: inc.To})
	}
	for _, o := range plan.Options {
		opt := scenario.Option{Group: o.Group, Nodes: o.NodeCount}
		for _, p := range o.Pods {
			opt.Pods = append(opt.Pods, p.Name)
		}
		res.Options = append(res.Options, opt)
	}
	if plan.Chosen != nil {
		res.Chosen = plan.Chosen.Group
	}
	triggered := map[string]bool{}
	res.Triggered = []string{}
	res.TriggeredScaleUp = map[string]string{}
	if len(plan.Increases) > 0 {
		msg := scaleup.TriggeredMessage(plan.Increases)
		for _, p := range plan.Triggered {
			triggered[p.Name] = true
			res.Triggered = append(res.Triggered, p.Name)
			res.TriggeredScaleUp[p.Name] = msg
		}
	}
	res.NotTriggerScaleUp = map[string]string{}
	for _, r := range plan.NoScaleUp {
		res.NotTriggerScaleUp[r.Pod.Name] = scaleup.NotTriggeredMessage(r)
	}
	res.Remaining, res.Awaiting = names(plan.Remaining), names(plan.Awaiting)
}

func names(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}
