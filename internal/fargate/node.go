package fargate

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/capacity/nodegroups"
	"github.com/berth-sim/berth/internal/cluster"
)

// EphemeralStorage is the ephemeral storage every Fargate pod gets by default.
var EphemeralStorage = resource.MustParse("20Gi")

// BuildNode is the Node object EKS registers for a pod's micro-VM
// (docs/fargate.md#the-node): the Fargate labels and taint, the zone of its
// subnet, capacity and allocatable of the pod's size with room for one
// pod, and Amazon Linux 2 system info. It draws IDs from the state's
// random source but does not insert the node.
func BuildNode(s *cluster.State, rec *cluster.FargatePod, z Size) *corev1.Node {
	region := aws.Region(s.Info)
	host := aws.NodeName(region, rec.IP)
	name := "fargate-" + host
	labels := map[string]string{
		nodegroups.LabelBetaArch:      "amd64",
		nodegroups.LabelBetaOS:        "linux",
		LabelComputeType:              ComputeTypeFargate,
		nodegroups.LabelFailureRegion: region,
		nodegroups.LabelFailureZone:   rec.Zone,
		corev1.LabelArchStable:        "amd64",
		corev1.LabelHostname:          host,
		corev1.LabelOSStable:          "linux",
		corev1.LabelTopologyRegion:    region,
		corev1.LabelTopologyZone:      rec.Zone,
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(z.MilliCPU, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(z.MemoryMiB<<20, resource.BinarySI),
		corev1.ResourceEphemeralStorage: EphemeralStorage.DeepCopy(),
		corev1.ResourcePods:             *resource.NewQuantity(1, resource.DecimalSI),
	}
	now := metav1.NewTime(s.Now)
	info := aws.BootedSystemInfo(s, aws.AMIFamilyAmazonLinux2, "amd64")
	task := fmt.Sprintf("%016x%016x", s.Rand.Uint64(), s.Rand.Uint64())
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			UID:               types.UID(s.NewUID()),
			CreationTimestamp: now,
			Labels:            labels,
			Annotations: map[string]string{
				nodegroups.AnnotationTTL:              "0",
				nodegroups.AnnotationControllerAttach: "true",
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: aws.ProviderID(rec.Zone, task+"/"+name),
			Taints:     []corev1.Taint{Taint},
		},
		Status: corev1.NodeStatus{
			Capacity:    resources,
			Allocatable: resources.DeepCopy(),
			Conditions:  nodegroups.ReadyConditions(now),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: rec.IP},
				{Type: corev1.NodeInternalDNS, Address: host},
				{Type: corev1.NodeHostName, Address: host},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: nodegroups.KubeletPort}},
			NodeInfo:        info,
		},
	}
}

// Kubelet timing on a Fargate node (docs/fargate.md#events-and-timing), from
// the EKS workshop's events: the micro-VM is up when its node registers, so
// the sandbox is ready at once (Pulling has the age of Scheduled); Fargate
// keeps no image cache, so every pod pulls, in the workshop's 43 s; the
// containers start one second after they are created (Created 9m5s,
// Started 9m4s).
const (
	KubeletSandboxDelay = 0
	KubeletPullDelay    = 43 * time.Second
	KubeletStartDelay   = 1 * time.Second
)

// KubeletTiming returns the kubelet timing of Fargate nodes.
func KubeletTiming(node *corev1.Node) (sandbox, pull, start time.Duration, ok bool) {
	if !IsFargateNode(node) {
		return 0, 0, 0, false
	}
	return KubeletSandboxDelay, KubeletPullDelay, KubeletStartDelay, true
}
