package why

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/autoscaler/scaleup"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/pools"
	"github.com/berth-sim/berth/internal/karpenter/provisioning"
	"github.com/berth-sim/berth/internal/scheduler"
)

// Fix is one verified suggestion.
type Fix struct {
	// Kind is toleration, nodepool-limit, group-max, pod-affinity,
	// topology-spread, node-affinity, node-selector or requests.
	Kind   string `json:"kind"`
	Change string `json:"change"`
	// Size is how much the change alters (items added, dropped or raised;
	// for requests the percent cut), the first ranking key.
	Size int `json:"size"`
	// LandsOn is where the pod would go with the change: a node, a new
	// NodeClaim or a node group's new node.
	LandsOn string `json:"landsOn"`
}

// kindRank breaks ties between equally small changes: a toleration keeps
// every placement rule the author wrote and only admits tainted nodes;
// raising a capacity limit changes no workload; dropping a rule loses
// intent; lowering requests changes what the workload gets (docs/why.md).
var kindRank = map[string]int{"toleration": 0, "nodepool-limit": 1, "group-max": 1, "relax-node-affinity": 2,
	"topology-spread": 3, "pod-affinity": 3, "node-affinity": 4, "node-selector": 4, "requests": 5}

// candidate is a change to try: a modified pod, or a capacity edit.
type candidate struct {
	fix Fix
	pod *corev1.Pod
	// karpenter / groups edit the capacity side for the check.
	karpenter func(*provisioning.Input)
	pool      string
	groups    []scaleup.Group
}

// fixes builds the candidates from what the layers found, verifies each on
// throw-away copies and returns those that place the pod, smallest first.
func fixes(s *cluster.State, pod *corev1.Pod, r *Report) ([]Fix, error) {
	var cands []candidate
	cands = append(cands, tolerationCandidates(s, pod, r)...)
	cands = append(cands, relaxCandidates(s, pod, r)...)
	cands = append(cands, ruleCandidates(pod)...)
	cands = append(cands, requestCandidates(pod, r)...)
	limits, err := limitCandidates(s, pod, r)
	if err != nil {
		return nil, err
	}
	cands = append(cands, limits...)
	shrunk, err := shrinkCandidates(s, pod, r)
	if err != nil {
		return nil, err
	}
	cands = append(cands, shrunk...)
	maxes, err := maxSizeCandidates(s, pod, r)
	if err != nil {
		return nil, err
	}
	cands = append(cands, maxes...)

	var out []Fix
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c.fix.Change] {
			continue
		}
		seen[c.fix.Change] = true
		where, err := verify(s, pod, c)
		if err != nil {
			return nil, err
		}
		if where == "" {
			continue
		}
		c.fix.LandsOn = where
		out = append(out, c.fix)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Size != b.Size {
			return a.Size < b.Size
		}
		if kindRank[a.Kind] != kindRank[b.Kind] {
			return kindRank[a.Kind] < kindRank[b.Kind]
		}
		return a.Change < b.Change
	})
	return out, nil
}

// verify asks, on copies, where the pod would go with the change: an
// existing node first (the scheduler's next attempt), then a new
// NodeClaim (Karpenter's solve), then a node group's new node
// (cluster-autoscaler's plan). "" means the change does not help.
func verify(s *cluster.State, orig *corev1.Pod, c candidate) (string, error) {
	pod := c.pod
	if pod == nil {
		pod = orig
	}
	if c.pod != nil {
		sim, err := scheduler.NewWithProfile(schedulerName(pod), nil).Simulate(s)
		if err != nil {
			return "", err
		}
		if d := sim.Schedule(pod); d.SelectedNode != "" {
			return describeNode(s, d.SelectedNode), nil
		}
	}
	if c.pod != nil || c.karpenter != nil {
		if len(pools.List(s)) > 0 {
			res, err := solveAlone(s, pod, c.pool, c.karpenter)
			if err != nil {
				return "", err
			}
			if res != nil && len(res.NewNodeClaims) > 0 && res.PodErrors[cluster.Key(pod.Namespace, pod.Name)] == nil {
				nc := res.NewNodeClaims[0]
				return fmt.Sprintf("a new NodeClaim of %s %s (%s)", poolKind(s, nc.NodePool.Name), nc.NodePool.Name,
					strings.Join(instanceTypeNames(nc), ", ")), nil
			}
		}
	}
	if c.pod != nil || c.groups != nil {
		groups := c.groups
		if groups == nil {
			var ok bool
			var err error
			if groups, ok, err = caGroups(s); err != nil || !ok {
				return "", err
			}
		}
		if len(groups) > 0 {
			opts, _, _ := caOptions(s)
			res, err := scaleup.Plan(scaleup.Input{State: s, Pending: []*corev1.Pod{pod}, Groups: groups, Options: opts,
				KubernetesVersion: s.Info.KubernetesVersion})
			if err != nil {
				return "", err
			}
			if len(res.Increases) > 0 {
				inc := res.Increases[0]
				return fmt.Sprintf("a new node of group %s (cluster-autoscaler: %s)", inc.Group, inc.String()), nil
			}
		}
	}
	return "", nil
}

func poolKind(s *cluster.State, name string) string {
	if _, ok := s.NodePools[name]; ok {
		return "NodePool"
	}
	return "Provisioner"
}

// describeNode names a node with its group and instance type.
func describeNode(s *cluster.State, name string) string {
	n := s.Nodes[name]
	if n == nil {
		return name
	}
	var parts []string
	for _, v := range []string{nodeGroupOf(n), n.Labels[corev1.LabelInstanceTypeStable], n.Labels[corev1.LabelTopologyZone]} {
		if v != "" {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		return name
	}
	return name + " (" + strings.Join(parts, ", ") + ")"
}

// tolerationCandidates: for every node (and every NodePool or node-group
// template) the taint filter rejected, tolerate exactly its untolerated
// NoSchedule/NoExecute taints.
func tolerationCandidates(s *cluster.State, pod *corev1.Pod, r *Report) []candidate {
	var taintSets [][]corev1.Taint
	if r.SchedulerLayer != nil {
		for _, g := range r.SchedulerLayer.Groups {
			if !hasPlugin(g.Verdicts, "TaintToleration") {
				continue
			}
			for _, name := range g.Nodes {
				if n := s.Nodes[name]; n != nil {
					taintSets = append(taintSets, untolerated(n.Spec.Taints, pod.Spec.Tolerations))
				}
			}
		}
	}
	for _, p := range pools.List(s) {
		if p.NotReady == "" {
			taintSets = append(taintSets, untolerated(p.Solver.Taints, pod.Spec.Tolerations))
		}
	}
	if groups, ok, _ := caGroups(s); ok {
		for _, g := range groups {
			if g.Template != nil {
				taintSets = append(taintSets, untolerated(g.Template.Spec.Taints, pod.Spec.Tolerations))
			}
		}
	}
	var out []candidate
	for _, taints := range taintSets {
		if len(taints) == 0 {
			continue
		}
		p := pod.DeepCopy()
		var texts []string
		for _, t := range taints {
			tol := corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect}
			if t.Value == "" {
				tol.Operator = corev1.TolerationOpExists
			}
			p.Spec.Tolerations = append(p.Spec.Tolerations, tol)
			texts = append(texts, taintText(t))
		}
		out = append(out, candidate{pod: p, fix: Fix{Kind: "toleration", Size: len(taints),
			Change: "add toleration " + strings.Join(texts, ", ")}})
	}
	return out
}

func taintText(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

func untolerated(taints []corev1.Taint, tols []corev1.Toleration) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		ok := false
		for i := range tols {
			if tols[i].ToleratesTaint(logr.Discard(), &t, false) {
				ok = true
				break
			}
		}
		if !ok {
			out = append(out, t)
		}
	}
	return out
}

func hasPlugin(vs []Verdict, plugin string) bool {
	for _, v := range vs {
		if v.Plugin == plugin {
			return true
		}
	}
	return false
}

// ruleCandidates drop one placement rule at a time: a nodeSelector key,
// a required node-affinity expression, a required pod (anti-)affinity
// term; a hard topology spread constraint becomes soft.
func ruleCandidates(pod *corev1.Pod) []candidate {
	var out []candidate
	for _, k := range cluster.SortedKeys(pod.Spec.NodeSelector) {
		p := pod.DeepCopy()
		delete(p.Spec.NodeSelector, k)
		out = append(out, candidate{pod: p, fix: Fix{Kind: "node-selector", Size: 1,
			Change: fmt.Sprintf("drop nodeSelector %s=%s", k, pod.Spec.NodeSelector[k])}})
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		for i, term := range terms {
			for j, e := range term.MatchExpressions {
				p := pod.DeepCopy()
				req := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
				t := &req.NodeSelectorTerms[i]
				t.MatchExpressions = append(t.MatchExpressions[:j:j], t.MatchExpressions[j+1:]...)
				if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
					// An empty term matches nothing: the term goes, and
					// with it the whole requirement when it was the last.
					req.NodeSelectorTerms = append(req.NodeSelectorTerms[:i:i], req.NodeSelectorTerms[i+1:]...)
					if len(req.NodeSelectorTerms) == 0 {
						p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = nil
					}
				}
				out = append(out, candidate{pod: p, fix: Fix{Kind: "node-affinity", Size: 1,
					Change: fmt.Sprintf("drop required node affinity %s %s [%s]", e.Key, e.Operator, strings.Join(e.Values, ", "))}})
			}
		}
	}
	if a := pod.Spec.Affinity; a != nil && a.PodAffinity != nil {
		for i, t := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			p := pod.DeepCopy()
			list := &p.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			*list = append((*list)[:i:i], (*list)[i+1:]...)
			out = append(out, candidate{pod: p, fix: Fix{Kind: "pod-affinity", Size: 1,
				Change: fmt.Sprintf("drop required pod affinity (%s, topologyKey %s)", metav1.FormatLabelSelector(t.LabelSelector), t.TopologyKey)}})
		}
	}
	if a := pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		for i, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			p := pod.DeepCopy()
			list := &p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			*list = append((*list)[:i:i], (*list)[i+1:]...)
			out = append(out, candidate{pod: p, fix: Fix{Kind: "pod-affinity", Size: 1,
				Change: fmt.Sprintf("drop required pod anti-affinity (%s, topologyKey %s)", metav1.FormatLabelSelector(t.LabelSelector), t.TopologyKey)}})
		}
	}
	for i, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		p := pod.DeepCopy()
		p.Spec.TopologySpreadConstraints[i].WhenUnsatisfiable = corev1.ScheduleAnyway
		out = append(out, candidate{pod: p, fix: Fix{Kind: "topology-spread", Size: 1,
			Change: fmt.Sprintf("make topology spread on %s soft (whenUnsatisfiable: ScheduleAnyway)", c.TopologyKey)}})
	}
	return out
}

// relaxCandidates widen a required node-affinity In expression by one
// value: a value of that label on a node whose only rejection is the
// pod's node affinity (the pod still keeps its other rules).
func relaxCandidates(s *cluster.State, pod *corev1.Pod, r *Report) []candidate {
	a := pod.Spec.Affinity
	if r.SchedulerLayer == nil || a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var nodes []*corev1.Node
	for _, g := range r.SchedulerLayer.Groups {
		if len(g.Verdicts) != 1 || g.Verdicts[0].Plugin != "NodeAffinity" {
			continue
		}
		for _, name := range g.Nodes {
			if n := s.Nodes[name]; n != nil {
				nodes = append(nodes, n)
			}
		}
	}
	var out []candidate
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i, term := range terms {
		for j, e := range term.MatchExpressions {
			if e.Operator != corev1.NodeSelectorOpIn {
				continue
			}
			var values []string
			for _, n := range nodes {
				if v, ok := n.Labels[e.Key]; ok {
					values = addDistinct(values, v)
				}
			}
			sort.Strings(values)
			for _, v := range values {
				p := pod.DeepCopy()
				ex := &p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[i].MatchExpressions[j]
				ex.Values = append(ex.Values, v)
				out = append(out, candidate{pod: p, fix: Fix{Kind: "relax-node-affinity", Size: 1,
					Change: fmt.Sprintf("allow %s=%s in required node affinity (%s In [%s])", e.Key, v, e.Key, strings.Join(ex.Values, ", "))}})
			}
		}
	}
	return out
}

// requestCandidates lower the pod's requests just enough to fit the node
// (of those failing on resources alone) that needs the smallest cut.
func requestCandidates(pod *corev1.Pod, r *Report) []candidate {
	if r.SchedulerLayer == nil {
		return nil
	}
	best, bestCut := -1, 101
	for i, nc := range r.SchedulerLayer.Capacity {
		cut := 0
		for _, rn := range nc.Resources {
			free := rn.Allocatable - rn.Used
			if rn.Resource == string(corev1.ResourcePods) || free <= 0 {
				cut = 101
				break
			}
			if c := int(100 - free*100/rn.Requested); c > cut {
				cut = c
			}
		}
		if cut < bestCut {
			best, bestCut = i, cut
		}
	}
	if best < 0 {
		return nil
	}
	nc := r.SchedulerLayer.Capacity[best]
	p := pod.DeepCopy()
	var texts []string
	for _, rn := range nc.Resources {
		name := corev1.ResourceName(rn.Resource)
		free := rn.Allocatable - rn.Used
		scaleRequests(p, name, free, rn.Requested)
		texts = append(texts, fmt.Sprintf("%s %s (from %s)", name, quantity(name, free), quantity(name, rn.Requested)))
	}
	return []candidate{{pod: p, fix: Fix{Kind: "requests", Size: max(bestCut, 1),
		Change: "lower requests to " + strings.Join(texts, ", ")}}}
}

// scaleRequests scales every container's request of name so that the
// pod's total is at most want (of had), rounding down.
func scaleRequests(p *corev1.Pod, name corev1.ResourceName, want, had int64) {
	for i := range p.Spec.Containers {
		c := &p.Spec.Containers[i]
		q, ok := c.Resources.Requests[name]
		if !ok {
			continue
		}
		v := q.Value()
		if name == corev1.ResourceCPU {
			v = q.MilliValue()
		}
		nv := v * want / had
		if name == corev1.ResourceCPU {
			c.Resources.Requests[name] = *resource.NewMilliQuantity(nv, resource.DecimalSI)
		} else {
			c.Resources.Requests[name] = *resource.NewQuantity(nv, resource.BinarySI)
		}
	}
}

// quantity prints a scheduler figure as a user writes it.
func quantity(name corev1.ResourceName, v int64) string {
	switch name {
	case corev1.ResourceCPU:
		return fmt.Sprintf("%dm", v)
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return fmt.Sprintf("%dMi", v/(1<<20))
	}
	return fmt.Sprint(v)
}
