// Package nodegroups brings up the EC2 nodes of eksctl node groups (EKS
// managed and self-managed) as the Auto Scaling group and the EKS AMI would:
// instance type, zone, private IP, node name, labels, taints and resources.
package nodegroups

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// Labels EKS and eksctl put on node-group nodes (docs/eks.md, node labels).
const (
	LabelNodeGroup                   = "eks.amazonaws.com/nodegroup"
	LabelCapacityType                = "eks.amazonaws.com/capacityType"
	LabelNodeGroupImage              = "eks.amazonaws.com/nodegroup-image"
	LabelSourceLaunchTemplateID      = "eks.amazonaws.com/sourceLaunchTemplateId"
	LabelSourceLaunchTemplateVersion = "eks.amazonaws.com/sourceLaunchTemplateVersion"
	LabelEksctlClusterName           = "alpha.eksctl.io/cluster-name"
	LabelEksctlNodeGroupName         = "alpha.eksctl.io/nodegroup-name"
	LabelZoneID                      = "topology.k8s.aws/zone-id"

	// Deprecated labels kubelet and the cloud provider still set.
	LabelBetaArch         = "beta.kubernetes.io/arch"
	LabelBetaOS           = "beta.kubernetes.io/os"
	LabelBetaInstanceType = "beta.kubernetes.io/instance-type"
	LabelFailureRegion    = "failure-domain.beta.kubernetes.io/region"
	LabelFailureZone      = "failure-domain.beta.kubernetes.io/zone"

	CapacityTypeOnDemand = "ON_DEMAND"
	CapacityTypeSpot     = "SPOT"
)

// Node annotations kubelet and the attach/detach controller set.
const (
	AnnotationProvidedNodeIP   = "alpha.kubernetes.io/provided-node-ip"
	AnnotationTTL              = "node.alpha.kubernetes.io/ttl"
	AnnotationControllerAttach = "volumes.kubernetes.io/controller-managed-attach-detach"
)

// defaultInstanceType is eksctl's DefaultNodeType, used if a group names none.
const defaultInstanceType = "m5.large"

// launchTemplateVersion is the version of the launch template eksctl
// creates with a new node group.
const launchTemplateVersion = "1"

// KubeletPort is the kubelet's default server port.
const KubeletPort = 10250

// CreateNodes brings the group up to ng.DesiredSize nodes and returns the
// nodes it added (nodes of the group already in the state count towards the
// size). Each node is inserted into s.Nodes with a resource version, appended
// to the scheduler's node order, and announced to the scheduling queue as a Node/Add.
//
// The instance type is the first of ng.InstanceTypes for on-demand and spot
// alike: EKS uses the "prioritized" on-demand strategy, and berth models
// spot's price-capacity-optimized choice by the same first entry, having no
// spot capacity data. Zones are filled as EC2 Auto Scaling's "balanced best
// effort" does: each new instance goes to the zone with the fewest instances
// of the group, ties broken by zone order.
//
// Zones and the instance type are checked before anything is added; only
// running out of subnet addresses can stop it part-way, and then the nodes
// already added stay (the caller decides whether to keep the state).
func CreateNodes(s *cluster.State, ng cluster.NodeGroup) ([]*corev1.Node, error) {
	it, err := InstanceType(ng)
	if err != nil {
		return nil, err
	}
	zones := Zones(s.Info, ng)
	// Check every zone before launching, so a bad group adds no node at all.
	for _, z := range zones {
		if _, err := aws.PrivateSubnet(s.Info, z); err != nil {
			return nil, fmt.Errorf("%s: %w", describe(ng), err)
		}
		if _, err := aws.ZoneID(z); err != nil {
			return nil, fmt.Errorf("%s: %w", describe(ng), err)
		}
	}
	counts := map[string]int{}
	existing := GroupNodes(s, ng.Name)
	for _, n := range existing {
		counts[n.Labels[corev1.LabelTopologyZone]]++
	}
	used := aws.UsedIPs(s)
	var created []*corev1.Node
	for i := len(existing); i < ng.DesiredSize; i++ {
		zone := NextZone(zones, counts)
		node, err := launch(s, ng, it, zone, used)
		if err != nil {
			return created, err
		}
		counts[zone]++
		created = append(created, node)
	}
	return created, nil
}

// launch builds one node in zone and inserts it into the state.
func launch(s *cluster.State, ng cluster.NodeGroup, it *aws.InstanceType, zone string, used map[string]bool) (*corev1.Node, error) {
	subnet, err := aws.PrivateSubnet(s.Info, zone)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describe(ng), err)
	}
	ip, err := aws.AllocateIPFrom(s, subnet, used)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describe(ng), err)
	}
	node, err := BuildNode(s, ng, it, zone, ip, aws.InstanceID(s))
	if err != nil {
		return nil, err
	}
	key := cluster.Key("", node.Name)
	if _, taken := s.Nodes[key]; taken {
		return nil, fmt.Errorf("%s: node %s already exists", describe(ng), node.Name)
	}
	node.ResourceVersion = s.Bump()
	s.NoteCreated(node.UID)
	s.Nodes[key] = node
	s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, node.Name)
	s.NodeAdded(node)
	return node, nil
}

// InstanceType resolves the instance type the group launches.
func InstanceType(ng cluster.NodeGroup) (*aws.InstanceType, error) {
	name := defaultInstanceType
	if len(ng.InstanceTypes) > 0 {
		name = ng.InstanceTypes[0]
	}
	it, ok := aws.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%s: unknown instance type %q", describe(ng), name)
	}
	return it, nil
}

// Zones are the zones the group's Auto Scaling group spans: its own, else
// the cluster's.
func Zones(info cluster.Info, ng cluster.NodeGroup) []string {
	if len(ng.Zones) > 0 {
		return ng.Zones
	}
	return aws.ClusterZones(info)
}

// NextZone is the zone with the fewest instances, the first such in order.
func NextZone(zones []string, counts map[string]int) string {
	best := zones[0]
	for _, z := range zones[1:] {
		if counts[z] < counts[best] {
			best = z
		}
	}
	return best
}

// GroupNodes returns the nodes of the named group, sorted by name.
func GroupNodes(s *cluster.State, group string) []*corev1.Node {
	var out []*corev1.Node
	for _, k := range cluster.SortedKeys(s.Nodes) {
		n := s.Nodes[k]
		if n.Labels[LabelEksctlNodeGroupName] == group || n.Labels[LabelNodeGroup] == group {
			out = append(out, n)
		}
	}
	return out
}

func describe(ng cluster.NodeGroup) string {
	if ng.Source != "" {
		return fmt.Sprintf("node group %q (%s)", ng.Name, ng.Source)
	}
	return fmt.Sprintf("node group %q", ng.Name)
}

// amiFamily is the group's AMI family, eksctl's default when unset.
func amiFamily(ng cluster.NodeGroup) string {
	if ng.AMIFamily == "" {
		return aws.DefaultAMIFamily
	}
	return ng.AMIFamily
}

// NodeLabels are the labels a node of the group carries in zone. Cluster
// Autoscaler can use them for template nodes.
func NodeLabels(info cluster.Info, ng cluster.NodeGroup, it *aws.InstanceType, zone, nodeName string) (map[string]string, error) {
	region := aws.Region(info)
	zoneID, err := aws.ZoneID(zone)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describe(ng), err)
	}
	family := amiFamily(ng)
	nodeOS := aws.OSForAMIFamily(family)
	labels := map[string]string{}
	// User labels first, so that the labels the system owns win a clash.
	for k, v := range ng.Labels {
		labels[k] = v
	}
	for k, v := range map[string]string{
		corev1.LabelArchStable:         it.Arch,
		LabelBetaArch:                  it.Arch,
		corev1.LabelOSStable:           nodeOS,
		LabelBetaOS:                    nodeOS,
		corev1.LabelInstanceTypeStable: it.Name,
		LabelBetaInstanceType:          it.Name,
		corev1.LabelTopologyRegion:     region,
		LabelFailureRegion:             region,
		corev1.LabelTopologyZone:       zone,
		LabelFailureZone:               zone,
		LabelZoneID:                    zoneID,
		LabelEksctlNodeGroupName:       ng.Name,
	} {
		labels[k] = v
	}
	if nodeName != "" {
		labels[corev1.LabelHostname] = nodeName
	}
	if info.Name != "" {
		labels[LabelEksctlClusterName] = info.Name
	}
	if ng.Managed {
		capacityType := CapacityTypeOnDemand
		if ng.Spot {
			capacityType = CapacityTypeSpot
		}
		labels[LabelNodeGroup] = ng.Name
		labels[LabelCapacityType] = capacityType
		labels[LabelNodeGroupImage] = aws.AMIID(region, family, it.Arch)
		labels[LabelSourceLaunchTemplateID] = aws.LaunchTemplateID(info.Name, ng.Name)
		labels[LabelSourceLaunchTemplateVersion] = launchTemplateVersion
	}
	return labels, nil
}

// BuildNode returns the Node object kubelet registers for a fresh instance
// of the group: Ready, with the group's labels and taints, EKS AMI capacity
// and allocatable, and the addresses of ip. It draws the UID and machine IDs
// from the state's random source but does not insert the node.
func BuildNode(s *cluster.State, ng cluster.NodeGroup, it *aws.InstanceType, zone, ip, instanceID string) (*corev1.Node, error) {
	name := aws.NodeName(aws.Region(s.Info), ip)
	labels, err := NodeLabels(s.Info, ng, it, zone, name)
	if err != nil {
		return nil, err
	}
	family := amiFamily(ng)
	capacity, allocatable := aws.NodeResources(it, aws.NodeOptions{
		AMIFamily:      family,
		MaxPodsPerNode: ng.MaxPodsPerNode,
		Managed:        ng.Managed,
	})
	var taints []corev1.Taint
	for _, t := range ng.Taints {
		taints = append(taints, *t.DeepCopy())
	}
	now := metav1.NewTime(s.Now)
	info := aws.BootedSystemInfo(s, family, it.Arch)
	node := &corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			UID:               types.UID(s.NewUID()),
			CreationTimestamp: now,
			Labels:            labels,
			Annotations: map[string]string{
				AnnotationProvidedNodeIP:   ip,
				AnnotationTTL:              "0",
				AnnotationControllerAttach: "true",
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: aws.ProviderID(zone, instanceID),
			Taints:     taints,
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			Conditions:  ReadyConditions(now),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeInternalDNS, Address: name},
				{Type: corev1.NodeHostName, Address: name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: KubeletPort}},
			NodeInfo:        info,
		},
	}
	return node, nil
}

// ReadyConditions are the conditions kubelet posts on a healthy node, in
// kubelet's order and with its reasons and messages.
func ReadyConditions(now metav1.Time) []corev1.NodeCondition {
	cond := func(t corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: status, LastHeartbeatTime: now, LastTransitionTime: now, Reason: reason, Message: message}
	}
	return []corev1.NodeCondition{
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
	}
}
