package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/karpenter/apis"
)

// EC2NodeClass is karpenter.k8s.aws/v1 EC2NodeClass: how the AWS provider
// launches a NodePool's instances (aws/karpenter-provider-aws
// pkg/apis/v1/ec2nodeclass.go).
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   EC2NodeClassSpec   `json:"spec,omitempty"`
	Status EC2NodeClassStatus `json:"status,omitempty"`
}

// EC2NodeClassSpec lists every field of the v1.14 CRD, so strict decoding
// accepts any EC2NodeClass the real API server accepts.
type EC2NodeClassSpec struct {
	SubnetSelectorTerms              []SubnetSelectorTerm              `json:"subnetSelectorTerms"`
	SecurityGroupSelectorTerms       []SecurityGroupSelectorTerm       `json:"securityGroupSelectorTerms"`
	CapacityReservationSelectorTerms []CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty"`
	PlacementGroupSelector           *PlacementGroupSelector           `json:"placementGroupSelector,omitempty"`
	AssociatePublicIPAddress         *bool                             `json:"associatePublicIPAddress,omitempty"`
	IPPrefixCount                    *int32                            `json:"ipPrefixCount,omitempty"`
	AMISelectorTerms                 []AMISelectorTerm                 `json:"amiSelectorTerms"`
	AMIFamily                        *string                           `json:"amiFamily,omitempty"`
	UserData                         *string                           `json:"userData,omitempty"`
	Role                             string                            `json:"role,omitempty"`
	InstanceProfile                  *string                           `json:"instanceProfile,omitempty"`
	Tags                             map[string]string                 `json:"tags,omitempty"`
	// Kubelet is an open map at v1.14 (any KubeletConfiguration field);
	// v1.0's typed fields (maxPods, kubeReserved, ...) are a subset of it.
	Kubelet             map[string]any        `json:"kubelet,omitempty"`
	BlockDeviceMappings []*BlockDeviceMapping `json:"blockDeviceMappings,omitempty"`
	InstanceStorePolicy *string               `json:"instanceStorePolicy,omitempty"`
	NetworkInterfaces   []*NetworkInterface   `json:"networkInterfaces,omitempty"`
	DetailedMonitoring  *bool                 `json:"detailedMonitoring,omitempty"`
	MetadataOptions     *MetadataOptions      `json:"metadataOptions,omitempty"`
	ConnectionTracking  *ConnectionTracking   `json:"connectionTracking,omitempty"`
	Context             *string               `json:"context,omitempty"`
	CPUOptions          *CPUOptions           `json:"cpuOptions,omitempty"`
}

// SubnetSelectorTerm selects subnets by tags or id.
type SubnetSelectorTerm struct {
	Tags map[string]string `json:"tags,omitempty"`
	ID   string            `json:"id,omitempty"`
}

// SecurityGroupSelectorTerm selects security groups by tags, id or name.
type SecurityGroupSelectorTerm struct {
	Tags map[string]string `json:"tags,omitempty"`
	ID   string            `json:"id,omitempty"`
	Name string            `json:"name,omitempty"`
}

// CapacityReservationSelectorTerm selects capacity reservations.
type CapacityReservationSelectorTerm struct {
	Tags                  map[string]string `json:"tags,omitempty"`
	ID                    string            `json:"id,omitempty"`
	OwnerID               string            `json:"ownerID,omitempty"`
	InstanceMatchCriteria string            `json:"instanceMatchCriteria,omitempty"`
}

// PlacementGroupSelector picks one placement group.
type PlacementGroupSelector struct {
	Name *string `json:"name,omitempty"`
	ID   *string `json:"id,omitempty"`
}

// AMISelectorTerm selects AMIs; an alias ("al2023@latest") must be alone.
type AMISelectorTerm struct {
	Alias        string            `json:"alias,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	ID           string            `json:"id,omitempty"`
	Name         string            `json:"name,omitempty"`
	Owner        string            `json:"owner,omitempty"`
	SSMParameter string            `json:"ssmParameter,omitempty"`
}

// MetadataOptions are the instance metadata service settings.
type MetadataOptions struct {
	HTTPEndpoint            *string `json:"httpEndpoint,omitempty"`
	HTTPProtocolIPv6        *string `json:"httpProtocolIPv6,omitempty"`
	HTTPPutResponseHopLimit *int64  `json:"httpPutResponseHopLimit,omitempty"`
	HTTPTokens              *string `json:"httpTokens,omitempty"`
}

// CPUOptions are EC2 CPU options.
type CPUOptions struct {
	NestedVirtualization *string `json:"nestedVirtualization,omitempty"`
}

// ConnectionTracking are the ENI connection tracking timeouts.
type ConnectionTracking struct {
	TCPEstablishedTimeout *int32 `json:"tcpEstablishedTimeout,omitempty"`
	UDPStreamTimeout      *int32 `json:"udpStreamTimeout,omitempty"`
	UDPTimeout            *int32 `json:"udpTimeout,omitempty"`
}

// BlockDeviceMapping is one volume; the root volume sizes ephemeral storage.
type BlockDeviceMapping struct {
	DeviceName *string      `json:"deviceName,omitempty"`
	EBS        *BlockDevice `json:"ebs,omitempty"`
	RootVolume bool         `json:"rootVolume,omitempty"`
}

// BlockDevice is an EBS volume.
type BlockDevice struct {
	DeleteOnTermination      *bool              `json:"deleteOnTermination,omitempty"`
	Encrypted                *bool              `json:"encrypted,omitempty"`
	IOPS                     *int64             `json:"iops,omitempty"`
	KMSKeyID                 *string            `json:"kmsKeyID,omitempty"`
	SnapshotID               *string            `json:"snapshotID,omitempty"`
	Throughput               *int64             `json:"throughput,omitempty"`
	VolumeInitializationRate *int32             `json:"volumeInitializationRate,omitempty"`
	VolumeSize               *resource.Quantity `json:"volumeSize,omitempty"`
	VolumeType               *string            `json:"volumeType,omitempty"`
}

// NetworkInterface is one ENI of the launched instance.
type NetworkInterface struct {
	NetworkCardIndex int32  `json:"networkCardIndex"`
	DeviceIndex      int32  `json:"deviceIndex"`
	InterfaceType    string `json:"interfaceType"`
}

// EC2NodeClassStatus is what the node class controller resolved.
type EC2NodeClassStatus struct {
	Subnets              []Subnet              `json:"subnets,omitempty"`
	SecurityGroups       []SecurityGroup       `json:"securityGroups,omitempty"`
	CapacityReservations []CapacityReservation `json:"capacityReservations,omitempty"`
	AMIs                 []AMI                 `json:"amis,omitempty"`
	InstanceProfile      string                `json:"instanceProfile,omitempty"`
	Conditions           []metav1.Condition    `json:"conditions,omitempty"`
}

// Subnet is a resolved subnet.
type Subnet struct {
	ID     string `json:"id"`
	Zone   string `json:"zone"`
	ZoneID string `json:"zoneID,omitempty"`
}

// SecurityGroup is a resolved security group.
type SecurityGroup struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// AMI is a resolved image and the requirements it serves.
type AMI struct {
	ID           string                           `json:"id"`
	Deprecated   bool                             `json:"deprecated,omitempty"`
	Name         string                           `json:"name,omitempty"`
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
}

// CapacityReservation is a resolved capacity reservation.
type CapacityReservation struct {
	AvailabilityZone      string       `json:"availabilityZone"`
	EndTime               *metav1.Time `json:"endTime,omitempty"`
	ID                    string       `json:"id"`
	InstanceMatchCriteria string       `json:"instanceMatchCriteria"`
	InstanceType          string       `json:"instanceType"`
	OwnerID               string       `json:"ownerID"`
	ReservationType       string       `json:"reservationType"`
	Interruptible         bool         `json:"interruptible"`
	State                 string       `json:"state"`
}

// DeepCopy returns an exact copy (apis.JSONCopy).
func (in *EC2NodeClass) DeepCopy() *EC2NodeClass { return apis.JSONCopy(in) }

// DeepCopyObject implements runtime.Object.
func (in *EC2NodeClass) DeepCopyObject() runtime.Object { return in.DeepCopy() }
