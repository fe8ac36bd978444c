package upstream

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/berth-sim/berth/internal/aws"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// AWS provider label keys (karpenter-provider-aws pkg/apis/v1/labels.go).
// The AWS provider is not a dependency: its labels are spelled here.
const (
	LabelTopologyZoneID                = "topology.k8s.aws/zone-id"
	LabelInstanceHypervisor            = "karpenter.k8s.aws/instance-hypervisor"
	LabelInstanceCategory              = "karpenter.k8s.aws/instance-category"
	LabelInstanceFamily                = "karpenter.k8s.aws/instance-family"
	LabelInstanceGeneration            = "karpenter.k8s.aws/instance-generation"
	LabelInstanceLocalNVME             = "karpenter.k8s.aws/instance-local-nvme"
	LabelInstanceSize                  = "karpenter.k8s.aws/instance-size"
	LabelInstanceCPU                   = "karpenter.k8s.aws/instance-cpu"
	LabelInstanceCPUManufacturer       = "karpenter.k8s.aws/instance-cpu-manufacturer"
	LabelInstanceMemory                = "karpenter.k8s.aws/instance-memory"
	LabelInstanceNetworkBandwidth      = "karpenter.k8s.aws/instance-network-bandwidth"
	LabelInstanceGPUName               = "karpenter.k8s.aws/instance-gpu-name"
	LabelInstanceGPUManufacturer       = "karpenter.k8s.aws/instance-gpu-manufacturer"
	LabelInstanceGPUCount              = "karpenter.k8s.aws/instance-gpu-count"
	LabelInstanceGPUMemory             = "karpenter.k8s.aws/instance-gpu-memory"
	LabelInstanceAcceleratorName       = "karpenter.k8s.aws/instance-accelerator-name"
	LabelInstanceAcceleratorManufactur = "karpenter.k8s.aws/instance-accelerator-manufacturer"
	LabelInstanceAcceleratorCount      = "karpenter.k8s.aws/instance-accelerator-count"
)

// awsWellKnownLabels are the AWS labels every catalog instance type defines
// (as a value or DoesNotExist). The AWS provider registers these in
// v1.WellKnownLabels at init; a well-known key a type does not define would
// change compatibility, so only keys built below are registered. Not modelled
// (the catalog lacks the data): instance-ebs-bandwidth,
// instance-encryption-in-transit-supported and the capacity-reservation labels.
var awsWellKnownLabels = []string{
	LabelTopologyZoneID,
	LabelInstanceHypervisor,
	LabelInstanceCategory,
	LabelInstanceFamily,
	LabelInstanceGeneration,
	LabelInstanceLocalNVME,
	LabelInstanceSize,
	LabelInstanceCPU,
	LabelInstanceCPUManufacturer,
	LabelInstanceMemory,
	LabelInstanceNetworkBandwidth,
	LabelInstanceGPUName,
	LabelInstanceGPUManufacturer,
	LabelInstanceGPUCount,
	LabelInstanceGPUMemory,
	LabelInstanceAcceleratorName,
	LabelInstanceAcceleratorManufactur,
	LabelInstanceAcceleratorCount,
	corev1.LabelWindowsBuild,
}

func init() {
	// Mirrors the AWS provider's apis/v1 init: its domain is restricted (pools
	// may not set those labels) and its labels are well known.
	karpv1.RestrictedLabelDomains = karpv1.RestrictedLabelDomains.Insert("karpenter.k8s.aws")
	karpv1.WellKnownLabels = karpv1.WellKnownLabels.Insert(awsWellKnownLabels...)
}

// SpotDiscount is the spot price as a fraction of on-demand in the harness's
// price model (both sides use it).
const SpotDiscount = 0.7

// AMIFamily is the Karpenter AMI family whose resource model sizes the
// catalog (EC2NodeClass default).
const AMIFamily = "AL2023"

var instanceTypeScheme = regexp.MustCompile(`(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`)

// InstanceTypes builds genuine cloudprovider.InstanceType values from berth's
// catalog for region and zones: every type with an on-demand price in region,
// or only the named ones when names is non-empty (types without a price get no
// offerings, which leaves them unusable, as EC2 would).
func InstanceTypes(region string, zones []string, names []string) ([]*cloudprovider.InstanceType, error) {
	var its []*aws.InstanceType
	if len(names) == 0 {
		for _, it := range aws.All() {
			if _, ok := it.OnDemandPrice(region); ok {
				its = append(its, it)
			}
		}
	} else {
		for _, n := range names {
			it, ok := aws.Lookup(n)
			if !ok {
				return nil, fmt.Errorf("instance type %q is not in the catalog", n)
			}
			its = append(its, it)
		}
	}
	out := make([]*cloudprovider.InstanceType, 0, len(its))
	for _, it := range its {
		out = append(out, InstanceType(it, region, zones))
	}
	return out, nil
}

// InstanceType converts one catalog entry, the way the AWS provider's
// NewInstanceType does: offerings per zone x {spot, on-demand}, requirements
// as computeRequirements builds them, and capacity minus overhead equal to
// berth's KarpenterAllocatable for AL2023.
func InstanceType(it *aws.InstanceType, region string, zones []string) *cloudprovider.InstanceType {
	var offerings cloudprovider.Offerings
	if od, ok := it.OnDemandPrice(region); ok {
		for _, zone := range zones {
			for _, ct := range []string{karpv1.CapacityTypeSpot, karpv1.CapacityTypeOnDemand} {
				price := od
				if ct == karpv1.CapacityTypeSpot {
					price = od * SpotDiscount
				}
				reqs := scheduling.NewRequirements(
					scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, ct),
					scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zone),
				)
				if id, err := aws.ZoneID(zone); err == nil {
					reqs.Add(scheduling.NewRequirement(LabelTopologyZoneID, corev1.NodeSelectorOpIn, id))
				}
				offerings = append(offerings, &cloudprovider.Offering{Requirements: reqs, Price: price, Available: true})
			}
		}
	}
	capacity, allocatable := aws.KarpenterResources(it, aws.KarpenterOptions{AMIFamily: AMIFamily})
	// Karpenter's Allocatable() is Capacity - Overhead.Total(); putting the
	// whole difference in KubeReserved makes it exactly berth's allocatable.
	reserved := corev1.ResourceList{}
	for name, c := range capacity {
		d := c.DeepCopy()
		if a, ok := allocatable[name]; ok {
			d.Sub(a)
		}
		if !d.IsZero() {
			reserved[name] = d
		}
	}
	return &cloudprovider.InstanceType{
		Name:         it.Name,
		Requirements: requirements(it, offerings, region),
		Offerings:    offerings,
		Capacity:     capacity,
		Overhead: &cloudprovider.InstanceTypeOverhead{
			KubeReserved:      reserved,
			SystemReserved:    corev1.ResourceList{},
			EvictionThreshold: corev1.ResourceList{},
		},
	}
}

func requirements(it *aws.InstanceType, offerings cloudprovider.Offerings, region string) scheduling.Requirements {
	var zones, capacityTypes, zoneIDs []string
	for _, o := range offerings.Available() {
		zones = append(zones, o.Requirements.Get(corev1.LabelTopologyZone).Any())
		capacityTypes = append(capacityTypes, o.Requirements.Get(karpv1.CapacityTypeLabelKey).Any())
		if id := o.Requirements.Get(LabelTopologyZoneID).Any(); id != "" {
			zoneIDs = append(zoneIDs, id)
		}
	}
	reqs := scheduling.NewRequirements(
		scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, it.Name),
		scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, it.Arch),
		scheduling.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, string(corev1.Linux)),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zones...),
		scheduling.NewRequirement(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, region),
		scheduling.NewRequirement(corev1.LabelWindowsBuild, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityTypes...),
		scheduling.NewRequirement(LabelInstanceCPU, corev1.NodeSelectorOpIn, strconv.Itoa(it.VCPU)),
		scheduling.NewRequirement(LabelInstanceCPUManufacturer, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceMemory, corev1.NodeSelectorOpIn, strconv.FormatInt(it.MemoryMiB, 10)),
		scheduling.NewRequirement(LabelInstanceNetworkBandwidth, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceCategory, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceFamily, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceGeneration, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceLocalNVME, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceSize, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceGPUName, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceGPUManufacturer, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceGPUCount, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceGPUMemory, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceAcceleratorName, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceAcceleratorManufactur, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceAcceleratorCount, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(LabelInstanceHypervisor, corev1.NodeSelectorOpIn, it.Hypervisor),
	)
	if len(zoneIDs) > 0 {
		reqs.Add(scheduling.NewRequirement(LabelTopologyZoneID, corev1.NodeSelectorOpIn, zoneIDs...))
	} else {
		reqs.Add(scheduling.NewRequirement(LabelTopologyZoneID, corev1.NodeSelectorOpDoesNotExist))
	}
	// Category and generation as the provider parses them from the name.
	if parts := instanceTypeScheme.FindStringSubmatch(it.Name); len(parts) == 4 {
		reqs[LabelInstanceCategory].Insert(parts[1])
		reqs[LabelInstanceGeneration].Insert(parts[3])
	}
	if parts := strings.Split(it.Name, "."); len(parts) == 2 {
		reqs.Get(LabelInstanceFamily).Insert(parts[0])
		reqs.Get(LabelInstanceSize).Insert(parts[1])
	}
	if it.LocalNVMeGB > 0 {
		reqs[LabelInstanceLocalNVME].Insert(strconv.Itoa(it.LocalNVMeGB))
	}
	if it.NetworkBandwidthMbps > 0 {
		reqs[LabelInstanceNetworkBandwidth].Insert(strconv.Itoa(it.NetworkBandwidthMbps))
	}
	if it.GPUCount > 0 && it.GPUName != "" {
		reqs.Get(LabelInstanceGPUName).Insert(it.GPUName)
		reqs.Get(LabelInstanceGPUManufacturer).Insert(it.GPUManufacturer)
		reqs.Get(LabelInstanceGPUCount).Insert(strconv.Itoa(it.GPUCount))
		reqs.Get(LabelInstanceGPUMemory).Insert(strconv.FormatInt(it.GPUMemoryMiB, 10))
	}
	if it.AcceleratorName != "" && it.AcceleratorCount > 0 {
		reqs.Get(LabelInstanceAcceleratorName).Insert(it.AcceleratorName)
		// Inferentia and Trainium are AWS's own chips.
		reqs.Get(LabelInstanceAcceleratorManufactur).Insert("aws")
		reqs.Get(LabelInstanceAcceleratorCount).Insert(strconv.Itoa(it.AcceleratorCount))
	}
	if it.CPUManufacturer != "" {
		reqs.Get(LabelInstanceCPUManufacturer).Insert(it.CPUManufacturer)
	}
	return reqs
}
