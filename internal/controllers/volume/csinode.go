// Package volume is the PersistentVolume controller ("persistentvolume-binder"
// in kube-controller-manager) together with the EBS CSI driver's external
// provisioner and node registration, as EKS runs them.
package volume

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// The aws-ebs-csi-driver add-on's workloads (docs/eks.md, add-on workloads). berth takes the
// driver as installed when its node DaemonSet exists; the image tag of that
// DaemonSet is the driver version, which picks the PV topology key.
const (
	driverNamespace  = "kube-system"
	nodeDaemonSet    = "ebs-csi-node"
	controllerPrefix = "ebs-csi-controller-"
)

// DriverInstalled reports whether the EBS CSI driver runs in the cluster.
func DriverInstalled(s *cluster.State) bool {
	_, ok := s.DaemonSets[cluster.Key(driverNamespace, nodeDaemonSet)]
	return ok
}

// DriverVersion is the tag of the node plugin's driver image ("v1.41.0"),
// or "" when unknown.
func DriverVersion(s *cluster.State) string {
	ds, ok := s.DaemonSets[cluster.Key(driverNamespace, nodeDaemonSet)]
	if !ok {
		return ""
	}
	for _, c := range ds.Spec.Template.Spec.Containers {
		if !strings.Contains(c.Image, "aws-ebs-csi-driver") {
			continue
		}
		if i := strings.LastIndex(c.Image, ":"); i >= 0 && !strings.Contains(c.Image[i:], "/") {
			return c.Image[i+1:]
		}
	}
	return ""
}

// runsNodePlugin mirrors the ebs-csi-node DaemonSet's node affinity: every
// EC2 node, never Fargate, EKS Auto Mode or hybrid nodes. A node that is not
// an EC2 instance (kind, GKE, on-premises: aws.IsEC2Node) has no EBS to
// attach, so the driver registers nothing there.
func runsNodePlugin(node *corev1.Node) bool {
	switch node.Labels[aws.LabelComputeType] {
	case "fargate", "auto", "hybrid":
		return false
	}
	return aws.IsEC2Node(node)
}

// EnsureCSINode registers the EBS CSI driver on a node as its node plugin
// does at start-up: the CSINode object with the driver, its topology keys and
// allocatable.count (the attach limit of the instance type, root volume
// reserved, the VPC CNI's default two ENIs attached), and the node label
// topology.ebs.csi.aws.com/zone that kubelet copies from NodeGetInfo.
// It reports whether it changed anything; calling it again is harmless.
func EnsureCSINode(s *cluster.State, node *corev1.Node) bool {
	zone := node.Labels[corev1.LabelTopologyZone]
	changed := false
	if zone != "" && node.Labels[aws.EBSZoneTopologyKey] != zone {
		old := node.DeepCopy()
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[aws.EBSZoneTopologyKey] = zone
		node.ResourceVersion = s.Bump()
		s.NodeUpdated(old, node)
		changed = true
	}
	if _, ok := s.CSINodes[node.Name]; ok {
		return changed
	}
	count := int32(aws.EBSAttachLimit(node.Labels[corev1.LabelInstanceTypeStable], aws.DefaultAttachedENIs, 1))
	csiNode := &storagev1.CSINode{
		TypeMeta: metav1.TypeMeta{Kind: "CSINode", APIVersion: "storage.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: node.Name, UID: types.UID(s.NewUID()), CreationTimestamp: metav1.NewTime(s.Now),
			ResourceVersion: s.Bump(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}},
			Annotations:     map[string]string{"storage.alpha.kubernetes.io/migrated-plugins": strings.Join(migratedPlugins, ",")},
		},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{
			Name:         aws.EBSCSIDriver,
			NodeID:       instanceID(node),
			TopologyKeys: []string{corev1.LabelOSStable, aws.EBSZoneTopologyKey, corev1.LabelTopologyZone},
			Allocatable:  &storagev1.VolumeNodeResources{Count: &count},
		}}},
	}
	s.NoteCreated(csiNode.UID)
	s.CSINodes[node.Name] = csiNode
	s.ObjectAdded(csiNode)
	return true
}

// migratedPlugins are the in-tree plugins kubelet reports as migrated to CSI.
var migratedPlugins = []string{"kubernetes.io/aws-ebs", "kubernetes.io/azure-disk", "kubernetes.io/azure-file",
	"kubernetes.io/cinder", "kubernetes.io/gce-pd", "kubernetes.io/portworx-volume", "kubernetes.io/vsphere-volume"}

// instanceID is the EC2 instance ID at the end of the node's providerID.
func instanceID(node *corev1.Node) string {
	id := node.Spec.ProviderID
	if i := strings.LastIndex(id, "/"); i >= 0 {
		return id[i+1:]
	}
	return node.Name
}

// AttachLimit returns the EBS attach limit recorded for a node (CSINode
// allocatable.count), if the driver is registered there.
func AttachLimit(s *cluster.State, nodeName string) (int, bool) {
	n, ok := s.CSINodes[nodeName]
	if !ok {
		return 0, false
	}
	for _, d := range n.Spec.Drivers {
		if d.Name == aws.EBSCSIDriver && d.Allocatable != nil && d.Allocatable.Count != nil {
			return int(*d.Allocatable.Count), true
		}
	}
	return 0, false
}
