package aws

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Labels that say what kind of machine a node is (docs/eks.md, node labels).
const (
	labelBetaInstanceType = "beta.kubernetes.io/instance-type"
	// LabelComputeType is absent on EC2 nodes and fargate, hybrid or auto elsewhere.
	LabelComputeType = "eks.amazonaws.com/compute-type"
	// LabelManagedNodeGroup is set on the nodes of an EKS managed node group.
	LabelManagedNodeGroup = "eks.amazonaws.com/nodegroup"
)

// IsEC2Node reports whether the AWS models (VPC CNI addresses and ENI limits,
// EBS attach limits and topology, instance-type allocatable) apply to a node.
// The rule (docs/pod-networking.md):
//
//   - a compute-type of fargate or hybrid is never an EC2 instance berth models;
//   - otherwise a spec.providerID decides: aws://… is EC2, any other scheme
//     (kind://, gce://, …) is not;
//   - without a providerID, an instance-type label naming a type in the
//     catalog makes the node an EC2 instance.
//
// Nodes exported from kind, GKE or on-premises clusters are therefore not EC2
// nodes, and their zone labels are opaque strings.
func IsEC2Node(node *corev1.Node) bool {
	switch node.Labels[LabelComputeType] {
	case "fargate", "hybrid":
		return false
	}
	if id := node.Spec.ProviderID; id != "" {
		return strings.HasPrefix(id, "aws://")
	}
	_, ok := NodeInstanceType(node)
	return ok
}

// NodeInstanceType is the catalog entry named by the node's instance-type
// label (the stable label, else the beta one).
func NodeInstanceType(node *corev1.Node) (*InstanceType, bool) {
	name := node.Labels[corev1.LabelInstanceTypeStable]
	if name == "" {
		name = node.Labels[labelBetaInstanceType]
	}
	if name == "" {
		return nil, false
	}
	return Lookup(name)
}

// PodIPCapacity is how many pod addresses the VPC CNI can hold on an EC2
// node without prefix delegation: every ENI's secondary IPv4 addresses,
// ENIs × (IPv4 per ENI − 1). EKS's max-pods is this plus 2 for the two
// host-network pods (aws-node, kube-proxy). ok is false when there is no
// such limit: not an EC2 node, an unknown instance type, or an IPv6 node
// (EKS IPv6 clusters hand out addresses from a delegated prefix).
func PodIPCapacity(node *corev1.Node) (n int, ok bool) {
	if !IsEC2Node(node) || nodeIPv6(node) {
		return 0, false
	}
	it, known := NodeInstanceType(node)
	if !known || it.MaxENIs <= 0 || it.IPv4PerENI <= 1 {
		return 0, false
	}
	return it.MaxENIs * (it.IPv4PerENI - 1), true
}

func nodeIPv6(node *corev1.Node) bool {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ip, err := netip.ParseAddr(a.Address)
			return err == nil && ip.Is6()
		}
	}
	return false
}

// NodeCapacityFromCatalog is status.capacity and status.allocatable for an EC2
// node whose manifest gives neither: what an EKS AMI would report for its
// instance type (managed-group max-pods cap when the node carries the
// managed node-group label). ok is false when the type is not in the catalog.
func NodeCapacityFromCatalog(node *corev1.Node) (capacity, allocatable corev1.ResourceList, ok bool) {
	it, known := NodeInstanceType(node)
	if !known {
		return nil, nil, false
	}
	_, managed := node.Labels[LabelManagedNodeGroup]
	capacity, allocatable = NodeResources(it, NodeOptions{Managed: managed})
	return capacity, allocatable, true
}
