// Package scenario is the neutral input and output of the cluster-autoscaler
// conformance test: node groups (an ASG each, with min/max/current size and a
// template node), existing nodes with their pods, pending pods and the CA
// flags that change a decision. It says nothing about how either side builds
// its objects, so berth's autoscaler and any reference implementation can
// each read it their own way. YAML via sigs.k8s.io/yaml (JSON field names).
package scenario

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// Scenario is one autoscaler decision: a scale-up for the pending pods and a
// scale-down pass over the existing nodes.
type Scenario struct {
	Name       string      `json:"name,omitempty"`
	Options    Options     `json:"options,omitempty"`
	NodeGroups []NodeGroup `json:"nodeGroups"`
	// Nodes that exist; a node with an empty Group is not autoscaled
	// (CA sees it, counts it towards totals, never resizes it).
	Nodes []Node `json:"nodes,omitempty"`
	PDBs  []PDB  `json:"pdbs,omitempty"`
	// Pods are the pending (PodScheduled=False, Unschedulable) pods, in
	// creation order.
	Pods []Pod `json:"pods,omitempty"`
}

// Options are the CA command-line flags a scenario may set; zero values mean
// CA's defaults (see Defaults).
type Options struct {
	// Expander is --expander: one name or a comma-separated chain.
	Expander string `json:"expander,omitempty"`
	// Priorities is the priority expander's ConfigMap
	// (cluster-autoscaler-priority-expander, key "priorities"): priority →
	// node-group name regexes; higher wins.
	Priorities               map[int][]string `json:"priorities,omitempty"`
	BalanceSimilarNodeGroups bool             `json:"balanceSimilarNodeGroups,omitempty"`
	// BalancingIgnoreLabels is --balancing-ignore-label (repeated).
	BalancingIgnoreLabels []string `json:"balancingIgnoreLabels,omitempty"`
	// MaxNodesTotal is --max-nodes-total; 0 means no limit.
	MaxNodesTotal int `json:"maxNodesTotal,omitempty"`
	// MaxCoresTotal is the upper bound of --cores-total, in cores.
	MaxCoresTotal int64 `json:"maxCoresTotal,omitempty"`
	// MaxMemoryTotal is the upper bound of --memory-total (the flag is in
	// GiB; here a quantity so small test limits can be written exactly).
	MaxMemoryTotal *resource.Quantity `json:"maxMemoryTotal,omitempty"`
	// ScaleDownUtilizationThreshold is --scale-down-utilization-threshold.
	ScaleDownUtilizationThreshold float64 `json:"scaleDownUtilizationThreshold,omitempty"`
	SkipNodesWithSystemPods       *bool   `json:"skipNodesWithSystemPods,omitempty"`
	SkipNodesWithLocalStorage     *bool   `json:"skipNodesWithLocalStorage,omitempty"`
	ExpendablePodsPriorityCutoff  *int32  `json:"expendablePodsPriorityCutoff,omitempty"`
}

// CA's defaults for the options above (README, "Flags and defaults").
const (
	DefaultExpander                      = "least-waste"
	DefaultMaxCoresTotal                 = 5000 * 64
	DefaultMaxMemoryTotalGiB             = 5000 * 64 * 20
	DefaultScaleDownUtilizationThreshold = 0.5
	DefaultExpendablePodsPriorityCutoff  = -10
)

// Defaults returns o with CA's default for every unset option.
func (o Options) Defaults() Options {
	if o.Expander == "" {
		o.Expander = DefaultExpander
	}
	if o.MaxCoresTotal == 0 {
		o.MaxCoresTotal = DefaultMaxCoresTotal
	}
	if o.MaxMemoryTotal == nil {
		q := resource.MustParse(fmt.Sprintf("%dGi", DefaultMaxMemoryTotalGiB))
		o.MaxMemoryTotal = &q
	}
	if o.ScaleDownUtilizationThreshold == 0 {
		o.ScaleDownUtilizationThreshold = DefaultScaleDownUtilizationThreshold
	}
	yes := true
	if o.SkipNodesWithSystemPods == nil {
		o.SkipNodesWithSystemPods = &yes
	}
	if o.SkipNodesWithLocalStorage == nil {
		o.SkipNodesWithLocalStorage = &yes
	}
	if o.ExpendablePodsPriorityCutoff == nil {
		c := int32(DefaultExpendablePodsPriorityCutoff)
		o.ExpendablePodsPriorityCutoff = &c
	}
	return o
}

// NodeGroup is one ASG / managed node group.
type NodeGroup struct {
	Name string `json:"name"`
	Min  int    `json:"min"`
	Max  int    `json:"max"`
	// Size is the group's current target (desired) size; nil means the
	// number of Nodes in the group. A size above that count means instances
	// that are requested but not registered yet (upcoming nodes).
	Size         *int     `json:"size,omitempty"`
	InstanceType string   `json:"instanceType,omitempty"`
	Zones        []string `json:"zones,omitempty"`
	// Template is the node CA simulates for a new instance when the group
	// has no ready node to copy (scale from zero).
	Template *Template `json:"template,omitempty"`
}

// Template is a template node: what a new instance of a group looks like.
type Template struct {
	Capacity corev1.ResourceList `json:"capacity"`
	// Allocatable nil means equal to Capacity (as CA's AWS templates are).
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	Labels      map[string]string   `json:"labels,omitempty"`
	Taints      []corev1.Taint      `json:"taints,omitempty"`
}

// Node is an existing node.
type Node struct {
	Name  string `json:"name"`
	Group string `json:"group,omitempty"`
	// NotReady marks a node that is registered but not Ready.
	NotReady    bool                `json:"notReady,omitempty"`
	Capacity    corev1.ResourceList `json:"capacity"`
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	Labels      map[string]string   `json:"labels,omitempty"`
	Annotations map[string]string   `json:"annotations,omitempty"`
	Taints      []corev1.Taint      `json:"taints,omitempty"`
	// Pods are the pods bound to the node.
	Pods []Pod `json:"pods,omitempty"`
}

// Owner kinds a Pod may name.
const (
	OwnerNone        = ""
	OwnerReplicaSet  = "ReplicaSet"
	OwnerStatefulSet = "StatefulSet"
	OwnerDaemonSet   = "DaemonSet"
	OwnerJob         = "Job"
	// OwnerMirror is a static pod (kubelet mirror pod).
	OwnerMirror = "Mirror"
)

// Pod is a pod with one container.
type Pod struct {
	Name        string              `json:"name"`
	Namespace   string              `json:"namespace,omitempty"`
	Labels      map[string]string   `json:"labels,omitempty"`
	Annotations map[string]string   `json:"annotations,omitempty"`
	Requests    corev1.ResourceList `json:"requests,omitempty"`
	// Owner is the kind of the pod's controller (Owner* constants).
	Owner        string              `json:"owner,omitempty"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Affinity     *corev1.Affinity    `json:"affinity,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	// TopologySpread are the pod's topology spread constraints.
	TopologySpread []corev1.TopologySpreadConstraint `json:"topologySpread,omitempty"`
	Priority       *int32                            `json:"priority,omitempty"`
	// LocalStorage gives the pod an emptyDir volume named "scratch" (on
	// disk, not Memory), which blocks scale-down under
	// --skip-nodes-with-local-storage.
	LocalStorage bool `json:"localStorage,omitempty"`
	// HostPort, when non-zero, is a TCP host port the container binds.
	HostPort int32 `json:"hostPort,omitempty"`
}

// NamespaceOrDefault is the pod's namespace, "default" when unset.
func (p *Pod) NamespaceOrDefault() string {
	if p.Namespace == "" {
		return "default"
	}
	return p.Namespace
}

// PDB is a PodDisruptionBudget over pods with all of Selector's labels.
type PDB struct {
	Name           string              `json:"name"`
	Namespace      string              `json:"namespace,omitempty"`
	Selector       map[string]string   `json:"selector"`
	MinAvailable   *intstr.IntOrString `json:"minAvailable,omitempty"`
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// GroupSize reports a node group's size: its current target and the target
// after the decision.
func (s *Scenario) GroupSize(name string) (int, bool) {
	for i := range s.NodeGroups {
		g := &s.NodeGroups[i]
		if g.Name != name {
			continue
		}
		if g.Size != nil {
			return *g.Size, true
		}
		n := 0
		for j := range s.Nodes {
			if s.Nodes[j].Group == name {
				n++
			}
		}
		return n, true
	}
	return 0, false
}

// Validate reports the first structural problem: duplicate or unknown names,
// sizes outside [min, max], a group with neither a node nor a template.
func (s *Scenario) Validate() error {
	groups := map[string]bool{}
	for _, g := range s.NodeGroups {
		if g.Name == "" {
			return fmt.Errorf("node group without a name")
		}
		if groups[g.Name] {
			return fmt.Errorf("node group %q listed twice", g.Name)
		}
		groups[g.Name] = true
		if g.Min < 0 || g.Max < g.Min {
			return fmt.Errorf("node group %q: min %d, max %d", g.Name, g.Min, g.Max)
		}
	}
	nodes := map[string]bool{}
	pods := map[string]bool{}
	addPod := func(p *Pod) error {
		key := p.NamespaceOrDefault() + "/" + p.Name
		if p.Name == "" || pods[key] {
			return fmt.Errorf("pod %q: empty or listed twice", key)
		}
		pods[key] = true
		return nil
	}
	hasNode := map[string]bool{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Name == "" || nodes[n.Name] {
			return fmt.Errorf("node %q: empty or listed twice", n.Name)
		}
		nodes[n.Name] = true
		if n.Group != "" && !groups[n.Group] {
			return fmt.Errorf("node %q: unknown node group %q", n.Name, n.Group)
		}
		hasNode[n.Group] = true
		for j := range n.Pods {
			if err := addPod(&n.Pods[j]); err != nil {
				return err
			}
		}
	}
	for i := range s.Pods {
		if err := addPod(&s.Pods[i]); err != nil {
			return err
		}
	}
	for _, g := range s.NodeGroups {
		size, _ := s.GroupSize(g.Name)
		if size < g.Min || size > g.Max {
			return fmt.Errorf("node group %q: size %d outside [%d, %d]", g.Name, size, g.Min, g.Max)
		}
		if !hasNode[g.Name] && g.Template == nil {
			return fmt.Errorf("node group %q: no node and no template", g.Name)
		}
	}
	return nil
}

// Parse reads a scenario from YAML and validates it.
func Parse(data []byte) (*Scenario, error) {
	var s Scenario
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Result is what an autoscaler decided on a Scenario. In an expectation a
// nil field is not asserted (the source of the expectation did not say);
// an empty non-nil one asserts emptiness.
type Result struct {
	// ScaleUp lists every group resized, by name.
	ScaleUp []GroupChange `json:"scaleUp,omitempty"`
	// Options are the expansion options offered to the expander: for each
	// group that helps, how many nodes and which pods, by group name.
	Options []Option `json:"options,omitempty"`
	// Chosen is the group whose option the expander chain picked (empty:
	// none). Among several options left equal by the expanders CA picks at
	// random; the comparison steers the genuine pick to this one (README,
	// "Ties").
	Chosen string `json:"chosen,omitempty"`
	// Triggered, Remaining and Awaiting are the pods that triggered the
	// scale-up, the pods that stay unschedulable, and the pods left for the
	// next loop (they fit a group, not the one chosen). Sorted.
	Triggered []string `json:"triggered,omitempty"`
	Remaining []string `json:"remaining,omitempty"`
	Awaiting  []string `json:"awaiting,omitempty"`
	// Error is the scale-up error text, if CA returned one.
	Error *string `json:"error,omitempty"`
	// NotTriggerScaleUp maps pod name → the event message.
	NotTriggerScaleUp map[string]string `json:"notTriggerScaleUp,omitempty"`
	// TriggeredScaleUp maps pod name → the event message.
	TriggeredScaleUp map[string]string `json:"triggeredScaleUp,omitempty"`
	// Unneeded are the scale-down candidates, sorted.
	Unneeded []string `json:"unneeded,omitempty"`
	// Unremovable maps node → why it cannot be removed.
	Unremovable map[string]string `json:"unremovable,omitempty"`
}

// GroupChange is one group's resize.
type GroupChange struct {
	Group string `json:"group"`
	From  int    `json:"from"`
	To    int    `json:"to"`
}

// Option is one expansion option.
type Option struct {
	Group string   `json:"group"`
	Nodes int      `json:"nodes"`
	Pods  []string `json:"pods,omitempty"`
}

// Normalize sorts every list so two results compare field by field.
func (r *Result) Normalize() {
	sort.Slice(r.ScaleUp, func(i, j int) bool { return r.ScaleUp[i].Group < r.ScaleUp[j].Group })
	sort.Slice(r.Options, func(i, j int) bool { return r.Options[i].Group < r.Options[j].Group })
	for i := range r.Options {
		sort.Strings(r.Options[i].Pods)
	}
	for _, l := range [][]string{r.Triggered, r.Remaining, r.Awaiting, r.Unneeded} {
		sort.Strings(l)
	}
}

// Case is a scenario with the result expected of it and where that
// expectation comes from.
type Case struct {
	Scenario Scenario `json:"scenario"`
	// Source names the upstream test the expectation was taken from.
	Source string `json:"source"`
	// Notes says how the upstream setup was translated, where it was.
	Notes  string `json:"notes,omitempty"`
	Expect Result `json:"expect"`
}

// ParseCase reads a case from YAML and validates its scenario.
func ParseCase(data []byte) (*Case, error) {
	var c Case
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, err
	}
	if err := c.Scenario.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Scenario.Name, err)
	}
	return &c, nil
}
