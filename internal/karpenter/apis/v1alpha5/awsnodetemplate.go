package v1alpha5

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/karpenter/apis"
)

// AWS is the v0.31 AWS provider configuration: inline in a Provisioner's
// spec.provider, or the body of an AWSNodeTemplate.
type AWS struct {
	AMIFamily             *string           `json:"amiFamily,omitempty"`
	Context               *string           `json:"context,omitempty"`
	InstanceProfile       *string           `json:"instanceProfile,omitempty"`
	SubnetSelector        map[string]string `json:"subnetSelector,omitempty"`
	SecurityGroupSelector map[string]string `json:"securityGroupSelector,omitempty"`
	Tags                  map[string]string `json:"tags,omitempty"`
	// LaunchTemplate's fields are inline upstream too.
	LaunchTemplateName  *string               `json:"launchTemplate,omitempty"`
	MetadataOptions     *MetadataOptions      `json:"metadataOptions,omitempty"`
	BlockDeviceMappings []*BlockDeviceMapping `json:"blockDeviceMappings,omitempty"`
	// APIVersion and Kind may be written inside an inline provider
	// (upstream embeds TypeMeta).
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// MetadataOptions are the instance metadata service settings.
type MetadataOptions struct {
	HTTPEndpoint            *string `json:"httpEndpoint,omitempty"`
	HTTPProtocolIPv6        *string `json:"httpProtocolIPv6,omitempty"`
	HTTPPutResponseHopLimit *int64  `json:"httpPutResponseHopLimit,omitempty"`
	HTTPTokens              *string `json:"httpTokens,omitempty"`
}

// BlockDeviceMapping is one volume.
type BlockDeviceMapping struct {
	DeviceName *string      `json:"deviceName,omitempty"`
	EBS        *BlockDevice `json:"ebs,omitempty"`
}

// BlockDevice is an EBS volume.
type BlockDevice struct {
	DeleteOnTermination *bool              `json:"deleteOnTermination,omitempty"`
	Encrypted           *bool              `json:"encrypted,omitempty"`
	IOPS                *int64             `json:"iops,omitempty"`
	KMSKeyID            *string            `json:"kmsKeyID,omitempty"`
	SnapshotID          *string            `json:"snapshotID,omitempty"`
	Throughput          *int64             `json:"throughput,omitempty"`
	VolumeSize          *resource.Quantity `json:"volumeSize,omitempty"`
	VolumeType          *string            `json:"volumeType,omitempty"`
}

// AWSNodeTemplate is karpenter.k8s.aws/v1alpha1 AWSNodeTemplate, what a
// Provisioner's providerRef names.
type AWSNodeTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AWSNodeTemplateSpec   `json:"spec,omitempty"`
	Status AWSNodeTemplateStatus `json:"status,omitempty"`
}

// AWSNodeTemplateSpec is the AWS provider plus user data and AMI selection.
type AWSNodeTemplateSpec struct {
	UserData           *string `json:"userData,omitempty"`
	AWS                `json:",inline"`
	AMISelector        map[string]string `json:"amiSelector,omitempty"`
	DetailedMonitoring *bool             `json:"detailedMonitoring,omitempty"`
}

// AWSNodeTemplateStatus is what the template controller resolved.
type AWSNodeTemplateStatus struct {
	Subnets        []Subnet        `json:"subnets,omitempty"`
	SecurityGroups []SecurityGroup `json:"securityGroups,omitempty"`
	AMIs           []AMI           `json:"amis,omitempty"`
}

// Subnet is a resolved subnet.
type Subnet struct {
	ID   string `json:"id"`
	Zone string `json:"zone"`
}

// SecurityGroup is a resolved security group.
type SecurityGroup struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// AMI is a resolved image.
type AMI struct {
	ID           string                           `json:"id"`
	Name         string                           `json:"name,omitempty"`
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
}

// DeepCopy returns an exact copy (apis.JSONCopy).
func (in *AWSNodeTemplate) DeepCopy() *AWSNodeTemplate { return apis.JSONCopy(in) }

// DeepCopyObject implements runtime.Object.
func (in *AWSNodeTemplate) DeepCopyObject() runtime.Object { return in.DeepCopy() }
