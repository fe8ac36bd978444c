package why

import (
	"maps"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/scheduler"
	"github.com/berth-sim/berth/internal/scheduler/plugins/noderesources"
)

// SchedulerLayer is kube-scheduler's verdict on the pod.
type SchedulerLayer struct {
	Nodes int `json:"nodes"`
	Fit   int `json:"fit"`
	// Message is the FailedScheduling text the scheduler's next attempt
	// would write ("" when it would place the pod). It comes from the same
	// cycle code as the event, so it matches the last event unless the
	// cluster changed since (Stale).
	Message string `json:"message,omitempty"`
	Stale   bool   `json:"stale,omitempty"`
	// WouldPlaceOn is the node the next attempt would choose.
	WouldPlaceOn string `json:"wouldPlaceOn,omitempty"`
	// Groups are the nodes that fail for the same reasons, one entry each,
	// in order of first appearance in the node tree.
	Groups []NodeGroupLine `json:"groups,omitempty"`
	// NotEnoughCapacityIn names the zones of the nodes that pass every
	// filter but the resource fit; Capacity has their numbers.
	NotEnoughCapacityIn []string       `json:"notEnoughCapacityIn,omitempty"`
	Capacity            []NodeCapacity `json:"capacity,omitempty"`
	// Scores is the score breakdown of the chosen node and the runners-up.
	Scores []NodeScore `json:"scores,omitempty"`
}

// Verdict is one plugin's rejection with upstream's reason texts.
type Verdict struct {
	Plugin  string   `json:"plugin"`
	Reasons []string `json:"reasons"`
}

// NodeGroupLine is a set of nodes with the same verdicts.
type NodeGroupLine struct {
	Count int `json:"count"`
	// Verdicts is empty for nodes that fit.
	Verdicts      []Verdict `json:"verdicts,omitempty"`
	NodeGroups    []string  `json:"nodeGroups,omitempty"`
	InstanceTypes []string  `json:"instanceTypes,omitempty"`
	Zones         []string  `json:"zones,omitempty"`
	Nodes         []string  `json:"nodes"`
}

// NodeCapacity is a node's numbers behind its Insufficient reasons.
type NodeCapacity struct {
	Node      string            `json:"node"`
	Zone      string            `json:"zone,omitempty"`
	Resources []ResourceNumbers `json:"resources"`
}

// ResourceNumbers are one resource's figures in the scheduler's units
// (millicores for cpu, bytes for memory and storage, a count for pods).
type ResourceNumbers struct {
	Resource    string `json:"resource"`
	Requested   int64  `json:"requested"`
	Used        int64  `json:"used"`
	Allocatable int64  `json:"allocatable"`
}

// NodeScore is one feasible node's weighted total and each Score
// plugin's normalized score and weight.
type NodeScore struct {
	Node    string        `json:"node"`
	Total   int64         `json:"total"`
	Chosen  bool          `json:"chosen,omitempty"`
	Plugins []PluginScore `json:"plugins"`
}

// PluginScore is one plugin's part of a node's total (Score x Weight).
type PluginScore struct {
	Plugin string `json:"plugin"`
	Score  int64  `json:"score"`
	Weight int64  `json:"weight"`
}

// runnersUp is how many feasible nodes besides the chosen one are shown.
const runnersUp = 3

// schedulerLayer asks a simulation forked from the state what the pod's
// scheduler thinks: every plugin on every node (Explain) and the next
// attempt's decision (Schedule). A bound pod is asked about as if it were
// pending again: the simulation runs on a copy without it.
func schedulerLayer(s *cluster.State, pod *corev1.Pod) (*SchedulerLayer, error) {
	view, p := s, pod
	if pod.Spec.NodeName != "" {
		cp := *s
		cp.Pods = maps.Clone(s.Pods)
		delete(cp.Pods, cluster.Key(pod.Namespace, pod.Name))
		view = &cp
		p = pod.DeepCopy()
		p.Spec.NodeName = ""
	}
	sim, err := scheduler.NewWithProfile(schedulerName(pod), nil).Simulate(view)
	if err != nil {
		return nil, err
	}
	ex := sim.Explain(p)
	layer := &SchedulerLayer{Nodes: len(ex.Nodes)}
	req := sim.PodRequests(p)
	index := map[string]int{}
	var resourceOnly []string
	for _, nv := range ex.Nodes {
		var vs []Verdict
		for _, r := range nv.Rejections() {
			vs = append(vs, Verdict{Plugin: r.Status.Plugin(), Reasons: r.Status.Reasons()})
		}
		if len(vs) == 0 {
			layer.Fit++
		}
		if len(vs) == 1 && vs[0].Plugin == noderesources.FitName {
			resourceOnly = append(resourceOnly, nv.Node)
		}
		key := verdictKey(vs)
		i, ok := index[key]
		if !ok {
			i = len(layer.Groups)
			index[key] = i
			layer.Groups = append(layer.Groups, NodeGroupLine{Verdicts: vs})
		}
		g := &layer.Groups[i]
		g.Count++
		g.Nodes = append(g.Nodes, nv.Node)
		if n := s.Nodes[nv.Node]; n != nil {
			g.NodeGroups = addDistinct(g.NodeGroups, nodeGroupOf(n))
			g.InstanceTypes = addDistinct(g.InstanceTypes, n.Labels[corev1.LabelInstanceTypeStable])
			g.Zones = addDistinct(g.Zones, n.Labels[corev1.LabelTopologyZone])
		}
	}
	for i := range layer.Groups {
		g := &layer.Groups[i]
		sort.Strings(g.NodeGroups)
		sort.Strings(g.InstanceTypes)
		sort.Strings(g.Zones)
	}
	for _, name := range resourceOnly {
		ni := sim.NodeInfo(name)
		nc := NodeCapacity{Node: name}
		if n := s.Nodes[name]; n != nil {
			nc.Zone = n.Labels[corev1.LabelTopologyZone]
			layer.NotEnoughCapacityIn = addDistinct(layer.NotEnoughCapacityIn, nc.Zone)
		}
		for _, ir := range noderesources.Fits(&req, ni) {
			nc.Resources = append(nc.Resources, ResourceNumbers{Resource: string(ir.ResourceName),
				Requested: ir.Requested, Used: ir.Used, Allocatable: ir.Capacity})
		}
		layer.Capacity = append(layer.Capacity, nc)
	}
	sort.Strings(layer.NotEnoughCapacityIn)
	// Closest to fitting first: by the largest share of the request the
	// node could give over the short resources, then node-tree order.
	sort.SliceStable(layer.Capacity, func(i, j int) bool { return room(layer.Capacity[i]) > room(layer.Capacity[j]) })

	diag := sim.Schedule(p)
	layer.Message = diag.Message
	layer.WouldPlaceOn = diag.SelectedNode
	if pod.Spec.NodeName == "" {
		if last := lastFailedScheduling(s, pod); last != "" && last != diag.Message {
			layer.Stale = true
		}
	}
	layer.Scores = scores(diag, sim.ScoreWeights())
	return layer, nil
}

// scores orders the feasible nodes chosen first, then by total (ties in
// search order), and keeps the chosen node and the runners-up.
func scores(diag *scheduler.Diagnosis, weights map[string]int64) []NodeScore {
	if diag.SelectedNode == "" || len(diag.Feasible) == 0 {
		return nil
	}
	plugins := make([]string, 0, len(diag.Scores))
	for name := range diag.Scores {
		plugins = append(plugins, name)
	}
	sort.Strings(plugins)
	var out []NodeScore
	for i, node := range diag.Feasible {
		ns := NodeScore{Node: node, Chosen: node == diag.SelectedNode}
		if i < len(diag.Totals) {
			ns.Total = diag.Totals[i]
		}
		for _, name := range plugins {
			list := diag.Scores[name]
			if i < len(list) {
				ns.Plugins = append(ns.Plugins, PluginScore{Plugin: name, Score: list[i].Score, Weight: weights[name]})
			}
		}
		out = append(out, ns)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Chosen != out[j].Chosen {
			return out[i].Chosen
		}
		return out[i].Total > out[j].Total
	})
	if len(out) > runnersUp+1 {
		out = out[:runnersUp+1]
	}
	return out
}

func verdictKey(vs []Verdict) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString(v.Plugin)
		b.WriteByte(0)
		b.WriteString(strings.Join(v.Reasons, "\x01"))
		b.WriteByte(0)
	}
	return b.String()
}

// nodeGroupOf names what a node belongs to: its managed node group, its
// NodePool, its eksctl self-managed group, or Fargate.
func nodeGroupOf(n *corev1.Node) string {
	for _, k := range []string{"eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool", "karpenter.sh/provisioner-name", "alpha.eksctl.io/nodegroup-name"} {
		if v := n.Labels[k]; v != "" {
			return v
		}
	}
	if n.Labels["eks.amazonaws.com/compute-type"] == "fargate" {
		return "fargate"
	}
	return ""
}

func addDistinct(list []string, v string) []string {
	if v == "" {
		return list
	}
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// room is the smallest share (in thousandths) of the pod's request the
// node has free over its short resources.
func room(nc NodeCapacity) int64 {
	best := int64(1000)
	for _, r := range nc.Resources {
		share := int64(0)
		if free := r.Allocatable - r.Used; free > 0 && r.Requested > 0 {
			share = free * 1000 / r.Requested
		}
		if share < best {
			best = share
		}
	}
	return best
}
