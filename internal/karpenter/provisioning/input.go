package provisioning

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// NodePool is what the solver needs of a v1 NodePool (or of a v1alpha5
// Provisioner converted to one).
type NodePool struct {
	Name   string
	UID    types.UID
	Weight int32
	// Requirements, Labels, Taints and StartupTaints are the template's.
	Requirements  []scheduling.NodeSelectorRequirementWithMinValues
	Labels        map[string]string
	Taints        []corev1.Taint
	StartupTaints []corev1.Taint
	// Limits are spec.limits; nil means unlimited.
	Limits corev1.ResourceList
	// PoolLabel is the label naming the pool on its nodes:
	// karpenter.sh/nodepool, or karpenter.sh/provisioner-name for a
	// v1alpha5 Provisioner ("" means the former).
	PoolLabel string
	// NodeClassLabel is the label naming the node class
	// ("karpenter.k8s.aws/ec2nodeclass"), NodeClassName its value.
	NodeClassLabel, NodeClassName string
	// InstanceTypes are the cloud provider's types for the pool's class.
	InstanceTypes instancetype.InstanceTypes
}

// poolRequirements are the pool's requirements and template labels, as
// topology domains and templates start from.
func (np *NodePool) poolRequirements() scheduling.Requirements {
	r := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Requirements...)
	r.Add(scheduling.NewLabelRequirements(np.Labels).Values()...)
	return r
}

// claimLabels are the labels every NodeClaim of the pool gets.
func (np *NodePool) claimLabels() map[string]string {
	out := make(map[string]string, len(np.Labels)+2)
	for k, v := range np.Labels {
		out[k] = v
	}
	out[np.poolLabel()] = np.Name
	if np.NodeClassLabel != "" {
		out[np.NodeClassLabel] = np.NodeClassName
	}
	return out
}

// StateNode is a node the solver may place pods on: a registered Node, or
// an in-flight NodeClaim without one. The caller resolves what Karpenter's
// cluster state would report (labels, taints with startup and ephemeral
// taints dropped before initialization, allocatable from the NodeClaim
// where the Node reports nothing yet).
type StateNode struct {
	// Name is the Node's name, or the NodeClaim's before registration.
	Name string
	// NodeName and NodeClaimName name the objects behind it ("" if none),
	// for the Nominated event.
	NodeName, NodeClaimName string
	Labels                  map[string]string
	Taints                  []corev1.Taint
	Allocatable             corev1.ResourceList
	Capacity                corev1.ResourceList
	// Pods are the pods bound to it that still use resources.
	Pods        []*corev1.Pod
	Initialized bool
	// Managed nodes belong to a NodePool.
	Managed bool
	// VolumeLimits are the attach limits its CSINode reports, by driver (a
	// driver without one has none); Volumes the claims its pods use.
	VolumeLimits map[string]int
	Volumes      Volumes
}

// hostName is the node's hostname label, or its name without one.
func (n *StateNode) hostName() string {
	if h := n.Labels[corev1.LabelHostname]; h != "" {
		return h
	}
	return n.Name
}

// Cluster is what topology reads of the cluster: every node by name, every
// pod, and the namespaces (for namespace selectors).
type Cluster struct {
	Nodes      map[string]*corev1.Node
	Pods       []*corev1.Pod
	Namespaces []*corev1.Namespace
	// byNamespace indexes Pods (built on first use).
	byNamespace map[string][]*corev1.Pod
}

func (c *Cluster) podsIn(ns string) []*corev1.Pod {
	if c.byNamespace == nil {
		c.byNamespace = map[string][]*corev1.Pod{}
		for _, p := range c.Pods {
			c.byNamespace[p.Namespace] = append(c.byNamespace[p.Namespace], p)
		}
	}
	return c.byNamespace[ns]
}

func (c *Cluster) boundPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" && !cluster.IsTerminal(p) {
			out = append(out, p)
		}
	}
	return out
}

// podData is what the solver derives from a pod once per relaxation.
type podData struct {
	requests corev1.ResourceList
	// vec is requests in integers (exact when vec.ok), for the quick
	// capacity check against every in-flight claim.
	vec                requestVec
	requirements       scheduling.Requirements
	strictRequirements scheduling.Requirements
	volumes            Volumes
	// reqID numbers requirements by content within the solve (0: none),
	// for the claims' memoised compatibility verdicts.
	reqID int
}

func (np *NodePool) poolLabel() string {
	if np.PoolLabel != "" {
		return np.PoolLabel
	}
	return scheduling.NodePoolLabelKey
}
