package instancetype

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// instanceTypeScheme splits m5d.large / u-6tb1.metal into category (1) and
// generation (3), exactly as upstream types.go.
var instanceTypeScheme = regexp.MustCompile(`(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`)

// windowsBuilds are node.kubernetes.io/windows-build per Windows AMI family.
var windowsBuilds = map[string]string{
	"Windows2019": "10.0.17763",
	"Windows2022": "10.0.20348",
	"Windows2025": "10.0.26100",
}

func in(key string, values ...string) *scheduling.Requirement {
	return scheduling.NewRequirement(key, corev1.NodeSelectorOpIn, values...)
}

func doesNotExist(key string) *scheduling.Requirement {
	return scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist)
}

// inOrAbsent is In value, or DoesNotExist when the catalog has none.
func inOrAbsent(key string, value int) *scheduling.Requirement {
	if value <= 0 {
		return doesNotExist(key)
	}
	return in(key, strconv.Itoa(value))
}

// acceleratorManufacturer: Neuron devices report "aws"; the one non-Neuron
// inference accelerator in the catalog (dl2q) reports Qualcomm.
func acceleratorManufacturer(name string) string {
	if strings.HasPrefix(name, "qualcomm") {
		return "qualcomm"
	}
	return "aws"
}

// computeRequirements mirrors upstream computeRequirements (v1.6): every
// well-known key is present, DoesNotExist where the type has no value.
// zones are the zones the type is offered in intersected with the
// NodeClass subnet zones. docs/karpenter-instance-types.md#requirements
func computeRequirements(it *aws.InstanceType, region string, zones []Zone, amiFamily string) scheduling.Requirements {
	zoneNames := make([]string, 0, len(zones))
	var zoneIDs []string
	for _, z := range zones {
		zoneNames = append(zoneNames, z.Name)
		if z.ID != "" {
			zoneIDs = append(zoneIDs, z.ID)
		}
	}
	os := []string{string(corev1.Linux)}
	build, windows := windowsBuilds[amiFamily]
	if windows {
		os = nil // Windows AMIs exist for amd64 only
		if it.Arch == scheduling.ArchitectureAmd64 {
			os = []string{string(corev1.Windows)}
		}
	}
	hypervisor := it.Hypervisor // "" on bare metal, kept as upstream does
	reqs := scheduling.NewRequirements(
		in(corev1.LabelInstanceTypeStable, it.Name),
		in(corev1.LabelArchStable, it.Arch),
		in(corev1.LabelOSStable, os...),
		in(corev1.LabelTopologyZone, zoneNames...),
		in(corev1.LabelTopologyRegion, region),
		doesNotExist(corev1.LabelWindowsBuild),
		// The catalog has no SupportedUsageClasses: every type sells both.
		in(scheduling.CapacityTypeLabelKey, scheduling.CapacityTypeOnDemand, scheduling.CapacityTypeSpot),
		in(scheduling.LabelInstanceCPU, strconv.Itoa(it.VCPU)),
		doesNotExist(scheduling.LabelInstanceCPUManufacturer),
		inOrAbsent(scheduling.LabelInstanceCPUSustainedClockSpeedMhz, it.CPUSustainedClockMHz),
		in(scheduling.LabelInstanceMemory, strconv.FormatInt(it.MemoryMiB, 10)),
		inOrAbsent(scheduling.LabelInstanceEBSBandwidth, it.EBSBandwidthMbps),
		inOrAbsent(scheduling.LabelInstanceNetworkBandwidth, it.NetworkBandwidthMbps),
		doesNotExist(scheduling.LabelInstanceCategory),
		doesNotExist(scheduling.LabelInstanceFamily),
		doesNotExist(scheduling.LabelInstanceGeneration),
		inOrAbsent(scheduling.LabelInstanceLocalNVME, it.LocalNVMeGB),
		doesNotExist(scheduling.LabelInstanceSize),
		doesNotExist(scheduling.LabelInstanceGPUName),
		doesNotExist(scheduling.LabelInstanceGPUManufacturer),
		doesNotExist(scheduling.LabelInstanceGPUCount),
		doesNotExist(scheduling.LabelInstanceGPUMemory),
		doesNotExist(scheduling.LabelInstanceAcceleratorName),
		doesNotExist(scheduling.LabelInstanceAcceleratorManufacturer),
		doesNotExist(scheduling.LabelInstanceAcceleratorCount),
		in(scheduling.LabelInstanceHypervisor, hypervisor),
		in(scheduling.LabelInstanceEncryptionInTransitSupported, strconv.FormatBool(it.EncryptionInTransit)),
		// No capacity reservations are modelled (v1.3+ keys).
		doesNotExist(scheduling.LabelCapacityReservationID),
		doesNotExist(scheduling.LabelCapacityReservationType),
	)
	if len(zoneIDs) != 0 {
		reqs.Add(in(scheduling.LabelTopologyZoneID, zoneIDs...))
	}
	if parts := instanceTypeScheme.FindStringSubmatch(it.Name); len(parts) == 4 {
		reqs[scheduling.LabelInstanceCategory].Insert(parts[1])
		reqs[scheduling.LabelInstanceGeneration].Insert(parts[3])
	}
	if family, size, ok := strings.Cut(it.Name, "."); ok && !strings.Contains(size, ".") {
		reqs[scheduling.LabelInstanceFamily].Insert(family)
		reqs[scheduling.LabelInstanceSize].Insert(size)
	}
	// GPU labels need exactly one GPU model; fractional GPUs report count 0.
	if it.GPUName != "" {
		reqs[scheduling.LabelInstanceGPUName].Insert(it.GPUName)
		reqs[scheduling.LabelInstanceGPUManufacturer].Insert(it.GPUManufacturer)
		reqs[scheduling.LabelInstanceGPUCount].Insert(strconv.Itoa(it.GPUCount))
		reqs[scheduling.LabelInstanceGPUMemory].Insert(strconv.FormatInt(it.GPUMemoryMiB, 10))
	}
	if it.AcceleratorName != "" {
		reqs[scheduling.LabelInstanceAcceleratorName].Insert(it.AcceleratorName)
		reqs[scheduling.LabelInstanceAcceleratorManufacturer].Insert(acceleratorManufacturer(it.AcceleratorName))
		reqs[scheduling.LabelInstanceAcceleratorCount].Insert(strconv.Itoa(it.AcceleratorCount))
	}
	if windows {
		reqs[corev1.LabelWindowsBuild].Insert(build)
	}
	if it.CPUManufacturer != "" {
		reqs[scheduling.LabelInstanceCPUManufacturer].Insert(it.CPUManufacturer)
	}
	return reqs
}

// sortedZones returns zones ordered by name, for deterministic output.
func sortedZones(zones []Zone) []Zone {
	out := slices.Clone(zones)
	slices.SortFunc(out, func(a, b Zone) int { return strings.Compare(a.Name, b.Name) })
	return out
}
