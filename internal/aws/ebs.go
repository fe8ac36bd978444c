package aws

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// EBS facts used by storage validation, the EBS CSI provisioner model and
// the per-node attach limits (CSINode allocatable.count).

// EBSCSIDriver is the EBS CSI driver name; InTreeEBSProvisioner is the
// in-tree plugin name that CSI migration (on for every EKS version) hands
// to the CSI driver.
const (
	EBSCSIDriver         = "ebs.csi.aws.com"
	InTreeEBSProvisioner = "kubernetes.io/aws-ebs"
)

// EBS CSI topology keys. Drivers before v1.33.0 returned the driver's own
// key from CreateVolume; later ones return the well-known zone label
// (aws-ebs-csi-driver CHANGELOG v1.33.0; docs/eks.md, EBS volumes). Nodes carry both.
const (
	EBSZoneTopologyKey       = "topology.ebs.csi.aws.com/zone"
	WellKnownZoneTopologyKey = "topology.kubernetes.io/zone"
)

// EBSDefaultVolumeType is what the driver uses when a class names no type.
const EBSDefaultVolumeType = "gp3"

// EBSVolumeTypes are the values accepted for the `type` StorageClass
// parameter, sorted (kubernetes-sigs/aws-ebs-csi-driver pkg/cloud/cloud.go
// VolumeType* constants).
var EBSVolumeTypes = []string{"gp2", "gp3", "io1", "io2", "sc1", "st1", "standard"}

// ebsSizeLimits are the size ranges of each EBS volume type, from the AWS
// "Amazon EBS volume types" documentation (EC2 rejects CreateVolume outside
// them; the driver does not check sizes itself).
var ebsSizeLimits = map[string][2]string{
	"gp2":      {"1Gi", "16Ti"},
	"gp3":      {"1Gi", "64Ti"},
	"io1":      {"4Gi", "16Ti"},
	"io2":      {"4Gi", "64Ti"},
	"st1":      {"125Gi", "16Ti"},
	"sc1":      {"125Gi", "16Ti"},
	"standard": {"1Gi", "1Ti"},
}

// EBSSizeRange returns the smallest and largest volume of an EBS type.
func EBSSizeRange(volumeType string) (minSize, maxSize resource.Quantity, ok bool) {
	l, ok := ebsSizeLimits[volumeType]
	if !ok {
		return resource.Quantity{}, resource.Quantity{}, false
	}
	return resource.MustParse(l[0]), resource.MustParse(l[1]), true
}

// EBSVolumeType returns the volume type a StorageClass's parameters ask
// for: the `type` key (matched case-insensitively, as the driver lowercases
// parameter keys), else gp3 for the CSI driver. The in-tree plugin's default
// was gp2, but EKS's gp2 class always names its type.
func EBSVolumeType(parameters map[string]string) string {
	for k, v := range parameters {
		if strings.EqualFold(k, "type") {
			return strings.ToLower(v)
		}
	}
	return EBSDefaultVolumeType
}

// IsEBSProvisioner reports whether a StorageClass provisioner is served by
// the EBS CSI driver (directly or through CSI migration).
func IsEBSProvisioner(provisioner string) bool {
	return provisioner == EBSCSIDriver || provisioner == InTreeEBSProvisioner
}

const bytesPerGiB = int64(1) << 30

// RoundUpGiB rounds a byte count up to whole GiB, as the driver does before
// CreateVolume (EBS sizes are whole GiB); at least 1 GiB.
func RoundUpGiB(bytes int64) int64 {
	n := (bytes + bytesPerGiB - 1) / bytesPerGiB
	if n < 1 {
		n = 1
	}
	return n
}

// EBSVolumeCapacity is the capacity of the volume provisioned for a request:
// the request rounded up to GiB, printed in binary units ("10Gi").
func EBSVolumeCapacity(request resource.Quantity) resource.Quantity {
	return *resource.NewQuantity(RoundUpGiB(request.Value())*bytesPerGiB, resource.BinarySI)
}

// ZoneTopologyKeyForDriver returns the topology key CreateVolume returns for
// a driver version ("v1.32.0", "1.40.1"); an unparsable or empty version is
// taken as a current driver.
func ZoneTopologyKeyForDriver(version string) string {
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(version, "v"), "%d.%d", &major, &minor); err != nil {
		return WellKnownZoneTopologyKey
	}
	if major < 1 || (major == 1 && minor < 33) {
		return EBSZoneTopologyKey
	}
	return WellKnownZoneTopologyKey
}

// Attachment limit kinds, as the driver's limits table names them.
const (
	attachmentShared    = "shared"
	attachmentDedicated = "dedicated"
)

// EBSVolumeLimit approximates the driver's GetVolumeLimits
// (pkg/cloud/limits in aws-ebs-csi-driver) from catalog facts instead of
// its generated per-type table:
//   - Xen (non-Nitro) types: 39, dedicated.
//   - Nitro types with dedicated EBS attachments (7th generation x86, 8th
//     generation and later, g6/gr6, f2): 32 up to 48 vCPUs, then 48, 64, 88
//     and 128 by size; metal-24xl 39, larger metal 79.
//   - Other Nitro types share 28 attachments with ENIs and NVMe instance
//     store: 27 (one goes to the primary ENI), 31 for metal, minus the
//     instance-store disks (1 up to 32 vCPUs, 2 up to 72, else 4).
//
// Unknown types get the driver's default, 27 shared.
func EBSVolumeLimit(instanceType string) (limit int, attachment string) {
	it, ok := Lookup(instanceType)
	if !ok {
		return 27, attachmentShared
	}
	if it.Hypervisor == "xen" {
		return 39, attachmentDedicated
	}
	if dedicatedEBSAttachments(it) {
		switch {
		case strings.HasPrefix(it.Size, "metal-24xl"):
			return 39, attachmentDedicated
		case strings.HasPrefix(it.Size, "metal"):
			return 79, attachmentDedicated
		case it.VCPU <= 48:
			return 32, attachmentDedicated
		case it.VCPU <= 64:
			return 48, attachmentDedicated
		case it.VCPU <= 96:
			return 64, attachmentDedicated
		case it.VCPU <= 128:
			return 88, attachmentDedicated
		}
		return 128, attachmentDedicated
	}
	if it.BareMetal {
		return 31, attachmentShared
	}
	limit = 27
	if it.LocalNVMeGB > 0 {
		switch {
		case it.VCPU <= 32:
			limit--
		case it.VCPU <= 72:
			limit -= 2
		default:
			limit -= 4
		}
	}
	return limit, attachmentShared
}

func dedicatedEBSAttachments(it *InstanceType) bool {
	switch {
	case it.Generation >= 8:
		return true
	case it.Generation == 7:
		return it.Arch == "amd64"
	case it.Category == "g" || it.Category == "gr":
		return it.Generation >= 6
	case it.Category == "f":
		return it.Generation >= 2
	}
	return false
}

// DefaultAttachedENIs is how many ENIs the VPC CNI has attached when the
// EBS node plugin reads its limit: the primary ENI plus the one warm ENI
// of the default WARM_ENI_TARGET=1.
const DefaultAttachedENIs = 2

// EBSAttachLimit is the driver's getVolumesLimit: the type's limit minus the
// reserved attachments (the root volume when the --reserved-volume-attachments
// flag is unset) and, for shared limits, the ENIs beyond the primary one;
// never below 1. This is CSINode allocatable.count.
func EBSAttachLimit(instanceType string, attachedENIs, reservedAttachments int) int {
	limit, attachment := EBSVolumeLimit(instanceType)
	limit -= reservedAttachments
	if attachment == attachmentShared && attachedENIs > 1 {
		limit -= attachedENIs - 1
	}
	if limit <= 0 {
		limit = 1
	}
	return limit
}
