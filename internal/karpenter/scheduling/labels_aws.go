package scheduling

import corev1 "k8s.io/api/core/v1"

// AWS provider label keys (aws/karpenter-provider-aws pkg/apis/v1/labels.go,
// v1.6 line). Kept apart from the core so the algebra stays cloud-neutral.
const (
	AWSGroup = "karpenter.k8s.aws"

	LabelCapacityReservationID                = AWSGroup + "/capacity-reservation-id"
	LabelCapacityReservationType              = AWSGroup + "/capacity-reservation-type"
	LabelInstanceHypervisor                   = AWSGroup + "/instance-hypervisor"
	LabelInstanceEncryptionInTransitSupported = AWSGroup + "/instance-encryption-in-transit-supported"
	LabelInstanceCategory                     = AWSGroup + "/instance-category"
	LabelInstanceFamily                       = AWSGroup + "/instance-family"
	LabelInstanceGeneration                   = AWSGroup + "/instance-generation"
	LabelInstanceLocalNVME                    = AWSGroup + "/instance-local-nvme"
	LabelInstanceSize                         = AWSGroup + "/instance-size"
	LabelInstanceCPU                          = AWSGroup + "/instance-cpu"
	LabelInstanceCPUManufacturer              = AWSGroup + "/instance-cpu-manufacturer"
	LabelInstanceCPUSustainedClockSpeedMhz    = AWSGroup + "/instance-cpu-sustained-clock-speed-mhz"
	LabelInstanceMemory                       = AWSGroup + "/instance-memory"
	LabelInstanceEBSBandwidth                 = AWSGroup + "/instance-ebs-bandwidth"
	LabelInstanceNetworkBandwidth             = AWSGroup + "/instance-network-bandwidth"
	LabelInstanceGPUName                      = AWSGroup + "/instance-gpu-name"
	LabelInstanceGPUManufacturer              = AWSGroup + "/instance-gpu-manufacturer"
	LabelInstanceGPUCount                     = AWSGroup + "/instance-gpu-count"
	LabelInstanceGPUMemory                    = AWSGroup + "/instance-gpu-memory"
	LabelInstanceAcceleratorName              = AWSGroup + "/instance-accelerator-name"
	LabelInstanceAcceleratorManufacturer      = AWSGroup + "/instance-accelerator-manufacturer"
	LabelInstanceAcceleratorCount             = AWSGroup + "/instance-accelerator-count"
	// LabelNodeClass is written on NodeClaims but is not well-known.
	LabelNodeClass      = AWSGroup + "/ec2nodeclass"
	LabelTopologyZoneID = "topology.k8s.aws/zone-id"
)

// AWSWellKnownLabels are the keys the AWS provider adds to the core's
// well-known set (its init in pkg/apis/v1/labels.go).
var AWSWellKnownLabels = []string{
	LabelCapacityReservationID,
	LabelCapacityReservationType,
	LabelInstanceHypervisor,
	LabelInstanceEncryptionInTransitSupported,
	LabelInstanceCategory,
	LabelInstanceFamily,
	LabelInstanceGeneration,
	LabelInstanceSize,
	LabelInstanceLocalNVME,
	LabelInstanceCPU,
	LabelInstanceCPUManufacturer,
	LabelInstanceCPUSustainedClockSpeedMhz,
	LabelInstanceMemory,
	LabelInstanceEBSBandwidth,
	LabelInstanceNetworkBandwidth,
	LabelInstanceGPUName,
	LabelInstanceGPUManufacturer,
	LabelInstanceGPUCount,
	LabelInstanceGPUMemory,
	LabelInstanceAcceleratorName,
	LabelInstanceAcceleratorManufacturer,
	LabelInstanceAcceleratorCount,
	LabelTopologyZoneID,
	corev1.LabelWindowsBuild,
}

// AWSRestrictedLabelDomains are the domains the AWS provider reserves.
var AWSRestrictedLabelDomains = []string{AWSGroup}

// AWSVocabulary is the core vocabulary extended with the AWS provider's.
var AWSVocabulary = CoreVocabulary.Extend(AWSWellKnownLabels, AWSRestrictedLabelDomains)
