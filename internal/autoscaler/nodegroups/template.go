package nodegroups

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/capacity/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/daemonset"
)

// Taints cluster-autoscaler puts on nodes it removes, and on candidates.
const (
	TaintToBeDeleted       = "ToBeDeletedByClusterAutoscaler"
	TaintDeletionCandidate = "DeletionCandidateOfClusterAutoscaler"
	// LabelEBSZone is the EBS CSI driver's topology label, which the AWS
	// provider puts on synthetic templates.
	LabelEBSZone = "topology.ebs.csi.aws.com/zone"
	// templatePods is the pods capacity of a synthetic template: the AWS
	// provider hard-codes 110.
	templatePods = 110
)

// taintTagRE is the form the AWS provider accepts for a taint tag's value.
var taintTagRE = regexp.MustCompile(`^(.*):(NoSchedule|NoExecute|PreferNoSchedule)$`)

// Template is the node cluster-autoscaler imagines for a group when it
// plans a scale-up, with the DaemonSet pods that would start on it.
type Template struct {
	Node *corev1.Node
	Pods []*corev1.Pod
	// FromNode names the real node the template copies ("" for a
	// synthetic template built from the ASG).
	FromNode string
}

// TemplateFor builds the group's template: a sanitized copy of one of its
// Ready nodes when it has one, as cluster-autoscaler's node-info processor
// does, otherwise a synthetic node from the ASG (scale from zero). seq
// makes the name unique within one loop.
func TemplateFor(s *cluster.State, g Group, seq int) (Template, error) {
	for _, n := range g.Nodes(s) {
		if n.DeletionTimestamp != nil || !ready(n) || hasTaint(n, TaintToBeDeleted) {
			continue
		}
		return fromNode(s, g, n, seq), nil
	}
	node, err := Synthetic(s.Info, g, seq)
	if err != nil {
		return Template{}, err
	}
	return Template{Node: node, Pods: DaemonPods(s, node)}, nil
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// fromNode copies a real node under a template name, without
// cluster-autoscaler's own taints, with the node's DaemonSet pods.
func fromNode(s *cluster.State, g Group, n *corev1.Node, seq int) Template {
	name := fmt.Sprintf("template-node-for-%s-%d", g.Name, seq)
	node := &corev1.Node{
		TypeMeta:   n.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}, Annotations: n.Annotations},
		Spec:       corev1.NodeSpec{ProviderID: n.Spec.ProviderID},
		Status:     *n.Status.DeepCopy(),
	}
	for k, v := range n.Labels {
		node.Labels[k] = v
	}
	node.Labels[corev1.LabelHostname] = name
	for _, t := range n.Spec.Taints {
		if t.Key == TaintToBeDeleted || t.Key == TaintDeletionCandidate {
			continue
		}
		node.Spec.Taints = append(node.Spec.Taints, t)
	}
	var pods []*corev1.Pod
	for _, p := range s.PodsOnNode(n.Name) {
		if !isDaemonSetPod(p) || cluster.IsTerminal(p) {
			continue
		}
		cp := p.DeepCopy()
		cp.Name = p.Name + "-" + name
		cp.UID = ""
		cp.Spec.NodeName = name
		pods = append(pods, cp)
	}
	return Template{Node: node, Pods: pods, FromNode: n.Name}
}

func isDaemonSetPod(p *corev1.Pod) bool {
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "DaemonSet" {
		return true
	}
	return false
}

// Synthetic is the AWS provider's template for an ASG without nodes:
// capacity from the instance type (pods 110, allocatable equal to
// capacity), generic labels in the ASG's first zone, labels and taints from
// the node-template tags and the eks: tags, and for a managed group what
// EKS DescribeNodegroup returns (docs/cluster-autoscaler.md#scale-from-zero).
func Synthetic(info cluster.Info, g Group, seq int) (*corev1.Node, error) {
	ng := g.Source
	it, err := nodegroups.InstanceType(ng)
	if err != nil {
		return nil, err
	}
	zones := nodegroups.Zones(info, ng)
	zone := zones[0]
	region := aws.Region(info)
	name := fmt.Sprintf("%s-asg-%d", g.Name, seq)
	capacity := corev1.ResourceList{
		corev1.ResourcePods:   *resource.NewQuantity(templatePods, resource.DecimalSI),
		corev1.ResourceCPU:    *resource.NewQuantity(int64(it.VCPU), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(it.MemoryMiB*1024*1024, resource.BinarySI),
	}
	if it.GPUCount > 0 && it.IsNVIDIAGPU() {
		capacity[aws.ResourceNVIDIAGPU] = *resource.NewQuantity(int64(it.GPUCount), resource.DecimalSI)
	}
	labels := map[string]string{
		corev1.LabelArchStable:         it.Arch,
		corev1.LabelOSStable:           aws.OSForAMIFamily(amiFamily(ng)),
		corev1.LabelInstanceTypeStable: it.Name,
		corev1.LabelTopologyRegion:     region,
		corev1.LabelTopologyZone:       zone,
		LabelEBSZone:                   zone,
		corev1.LabelHostname:           name,
	}
	var taints []corev1.Taint
	if g.Managed {
		// DescribeNodegroup: the group's labels and taints, its capacity
		// type and name.
		for k, v := range ng.Labels {
			labels[k] = v
		}
		capacityType := nodegroups.CapacityTypeOnDemand
		if ng.Spot {
			capacityType = nodegroups.CapacityTypeSpot
		}
		labels[nodegroups.LabelCapacityType] = capacityType
		labels[nodegroups.LabelNodeGroup] = ng.Name
		labels["amiType"] = amiType(ng, it.Arch)
		labels["k8sVersion"] = info.KubernetesVersion
		taints = append(taints, ng.Taints...)
	}
	keys := make([]string, 0, len(g.Tags))
	for k := range g.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := g.Tags[k]
		switch {
		case strings.HasPrefix(k, TagTemplateLabel):
			labels[strings.TrimPrefix(k, TagTemplateLabel)] = v
		case strings.HasPrefix(k, "eks:"):
			labels[strings.TrimPrefix(k, "eks:")] = v
		case strings.HasPrefix(k, TagTemplateTaint):
			m := taintTagRE.FindStringSubmatch(v)
			if m == nil {
				continue
			}
			taints = setTaint(taints, corev1.Taint{Key: strings.TrimPrefix(k, TagTemplateTaint), Value: m[1], Effect: corev1.TaintEffect(m[2])})
		case strings.HasPrefix(k, TagTemplateResources):
			q, err := resource.ParseQuantity(v)
			if err == nil {
				capacity[corev1.ResourceName(strings.TrimPrefix(k, TagTemplateResources))] = q
			}
		}
	}
	node := &corev1.Node{
		TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions:  nodegroups.ReadyConditions(metav1.Time{}),
		},
	}
	return node, nil
}

// setTaint replaces a taint of the same key and effect, or adds it.
func setTaint(taints []corev1.Taint, t corev1.Taint) []corev1.Taint {
	for i := range taints {
		if taints[i].Key == t.Key && taints[i].Effect == t.Effect {
			taints[i] = t
			return taints
		}
	}
	return append(taints, t)
}

func amiFamily(ng cluster.NodeGroup) string {
	if ng.AMIFamily == "" {
		return aws.DefaultAMIFamily
	}
	return ng.AMIFamily
}

// amiType is the EKS AMI type DescribeNodegroup reports for the group.
func amiType(ng cluster.NodeGroup, arch string) string {
	family := amiFamily(ng)
	suffix := "x86_64"
	if arch == "arm64" {
		suffix = "ARM_64"
	}
	switch {
	case strings.HasPrefix(family, "Bottlerocket"):
		return "BOTTLEROCKET_" + suffix
	case family == "AmazonLinux2":
		return "AL2_" + suffix
	case strings.HasPrefix(family, "Windows"):
		return "WINDOWS_CORE_2022_x86_64"
	default:
		return "AL2023_" + suffix + "_STANDARD"
	}
}

// DaemonPods are the pods the cluster's DaemonSets would start on node.
func DaemonPods(s *cluster.State, node *corev1.Node) []*corev1.Pod {
	var out []*corev1.Pod
	for _, key := range cluster.SortedKeys(s.DaemonSets) {
		ds := s.DaemonSets[key]
		if ds.DeletionTimestamp != nil {
			continue
		}
		if run, _ := daemonset.NodeShouldRunDaemonPod(node, ds); !run {
			continue
		}
		out = append(out, daemonPod(ds, node.Name))
	}
	return out
}

func daemonPod(ds *appsv1.DaemonSet, node string) *corev1.Pod {
	p := daemonset.PodForNode(ds, node, "")
	p.Name = ds.Name + "-" + node
	p.Spec.NodeName = node
	return p
}
