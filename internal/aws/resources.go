package aws

import (
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// eksctl amiFamily values berth distinguishes (eksctl pkg/apis/eksctl.io/v1alpha5).
const (
	AMIFamilyAmazonLinux2023 = "AmazonLinux2023"
	AMIFamilyAmazonLinux2    = "AmazonLinux2"
	AMIFamilyBottlerocket    = "Bottlerocket"
	AMIFamilyUbuntu2204      = "Ubuntu2204"
	AMIFamilyUbuntu2404      = "Ubuntu2404"
	AMIFamilyWindows2022     = "WindowsServer2022FullContainer"
)

// DefaultAMIFamily is eksctl's default amiFamily.
const DefaultAMIFamily = AMIFamilyAmazonLinux2023

// DefaultVolumeSizeGiB is eksctl's DefaultNodeVolumeSize.
const DefaultVolumeSizeGiB = 80

// Extended resources AWS nodes advertise.
const (
	ResourceNVIDIAGPU corev1.ResourceName = "nvidia.com/gpu"
	ResourceAMDGPU    corev1.ResourceName = "amd.com/gpu"
	ResourceNeuron    corev1.ResourceName = "aws.amazon.com/neuron"
	ResourcePodENI    corev1.ResourceName = "vpc.amazonaws.com/pod-eni"
	ResourceEFA       corev1.ResourceName = "vpc.amazonaws.com/efa"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30

	// evictionMemoryMiB is the default evictionHard memory.available.
	evictionMemoryMiB = 100
	// evictionNodefsPercent is the default evictionHard nodefs.available.
	evictionNodefsPercent = 10
	// kubeReservedEphemeral is the default kube-reserved ephemeral-storage.
	kubeReservedEphemeral = 1 * gib
	// arm64MemoryCarveOutMiB is what Graviton firmware (CMA) keeps from the OS.
	arm64MemoryCarveOutMiB = 64
	// DefaultVMMemoryOverheadPercent is Karpenter's --vm-memory-overhead-percent.
	DefaultVMMemoryOverheadPercent = 0.075
)

// IsWindowsFamily reports whether an eksctl amiFamily boots Windows.
func IsWindowsFamily(amiFamily string) bool { return strings.HasPrefix(amiFamily, "Windows") }

// IsBottlerocketFamily reports whether an eksctl amiFamily is Bottlerocket.
func IsBottlerocketFamily(amiFamily string) bool { return strings.HasPrefix(amiFamily, "Bottlerocket") }

// OSForAMIFamily is the kubernetes.io/os value of nodes booted from the family.
func OSForAMIFamily(amiFamily string) string {
	if IsWindowsFamily(amiFamily) {
		return "windows"
	}
	return "linux"
}

// CapacityMemoryMiB is the memory a node of this type reports, modelled with
// Karpenter's formula: raw size, minus 64 MiB on arm64, minus
// ceil(m*overhead). The EKS guide only says real capacity is "roughly 5-7%
// below" nominal and publishes no table; Karpenter's model is the best public
// one, and using it everywhere keeps node groups and Karpenter consistent.
func CapacityMemoryMiB(it *InstanceType, overheadPercent float64) int64 {
	m := it.MemoryMiB
	if it.Arch == "arm64" {
		m -= arm64MemoryCarveOutMiB
	}
	return m - int64(math.Ceil(float64(m)*overheadPercent))
}

// KubeReservedCPUMilli is the EKS AMI / Karpenter kube-reserved CPU: 6% of
// the first core, 1% of the second, 0.5% of cores 3-4 and 0.25% of the rest,
// each band truncated to whole millicores.
func KubeReservedCPUMilli(cpuMilli int64) int64 {
	bands := []struct {
		start, end int64
		per10000   int64
	}{{0, 1000, 600}, {1000, 2000, 100}, {2000, 4000, 50}, {4000, 1 << 31, 25}}
	var reserved int64
	for _, b := range bands {
		if cpuMilli < b.start {
			break
		}
		reserved += (min(cpuMilli, b.end) - b.start) * b.per10000 / 10000
	}
	return reserved
}

// KubeReservedMemoryMiB is the EKS AMI / Karpenter kube-reserved memory for a
// node sized for pods pods: 11 MiB per pod plus 255 MiB.
func KubeReservedMemoryMiB(pods int) int64 { return 11*int64(pods) + 255 }

// ENIMaxPods is EKS's eni-max-pods value for the type; for Windows, whose
// VPC CNI uses only the primary ENI, it is that ENI's secondary addresses.
func ENIMaxPods(it *InstanceType, amiFamily string) int {
	if IsWindowsFamily(amiFamily) && it.IPv4PerENI > 0 {
		return it.IPv4PerENI - 1
	}
	return it.MaxPodsENI
}

// NodeOptions describe how an EKS node group boots a node.
type NodeOptions struct {
	// AMIFamily is eksctl's amiFamily; "" means AmazonLinux2023.
	AMIFamily string
	// MaxPodsPerNode overrides kubelet maxPods when positive.
	MaxPodsPerNode int
	// Managed is true for EKS managed node groups, which cap maxPods.
	Managed bool
	// VolumeSizeGiB is the root volume; 0 means eksctl's 80 GiB.
	VolumeSizeGiB int
}

func (o NodeOptions) amiFamily() string {
	if o.AMIFamily == "" {
		return DefaultAMIFamily
	}
	return o.AMIFamily
}

// MaxPods is the kubelet maxPods of a node-group node: the override if set;
// otherwise the ENI value, capped for managed groups at 110 below 30 vCPUs and
// 250 from 30 vCPUs ("Create a managed node group"), only where the ENI value
// is larger.
func MaxPods(it *InstanceType, opts NodeOptions) int {
	if opts.MaxPodsPerNode > 0 {
		return opts.MaxPodsPerNode
	}
	pods := ENIMaxPods(it, opts.amiFamily())
	if opts.Managed {
		limit := 110
		if it.VCPU >= 30 {
			limit = 250
		}
		pods = min(pods, limit)
	}
	return pods
}

// reservationPods is the pod count kube-reserved memory is computed from.
// AL2/AL2023 (nodeadm, bootstrap.sh) and Ubuntu size it from the ENI table
// even when maxPods is overridden (nodeadm's withDefaultReservedResources
// runs before the MNG/user maxPods drop-in); Bottlerocket and Windows size it
// from the maxPods actually in force. docs/eks.md (capacity and allocatable) notes the AL2023 case as
// unverified; berth picks the ENI value, matching nodeadm's code order.
func reservationPods(it *InstanceType, amiFamily string, maxPods int) int {
	if IsBottlerocketFamily(amiFamily) || IsWindowsFamily(amiFamily) {
		return maxPods
	}
	return ENIMaxPods(it, amiFamily)
}

// NodeResources returns status.capacity and status.allocatable of a node of
// an EKS managed or self-managed node group booted from an EKS AMI.
//
//	cpu               = vCPUs; allocatable minus the kube-reserved CPU bands
//	memory            = CapacityMemoryMiB (Karpenter's model, 7.5% overhead);
//	                    allocatable minus (11*pods+255)Mi and 100Mi eviction
//	ephemeral-storage = root volume size (the filesystem is in fact slightly
//	                    smaller); allocatable minus 1Gi and 10% eviction
//	pods              = MaxPods
//
// Linux nodes also report hugepages-1Gi/2Mi of 0, and NVIDIA GPU types
// nvidia.com/gpu (eksctl picks the NVIDIA AMI and installs the device plugin).
func NodeResources(it *InstanceType, opts NodeOptions) (capacity, allocatable corev1.ResourceList) {
	family := opts.amiFamily()
	volume := int64(opts.VolumeSizeGiB)
	if volume <= 0 {
		volume = DefaultVolumeSizeGiB
	}
	pods := MaxPods(it, opts)
	r := overheadInputs{
		cpuMilli:       int64(it.VCPU) * 1000,
		memoryMiB:      CapacityMemoryMiB(it, DefaultVMMemoryOverheadPercent),
		storageBytes:   volume * gib,
		pods:           pods,
		reservationPod: reservationPods(it, family, pods),
	}
	capacity, allocatable = r.build()
	if OSForAMIFamily(family) == "linux" {
		for _, l := range []corev1.ResourceList{capacity, allocatable} {
			l["hugepages-1Gi"] = *resource.NewQuantity(0, resource.DecimalSI)
			l["hugepages-2Mi"] = *resource.NewQuantity(0, resource.DecimalSI)
			if it.IsNVIDIAGPU() {
				l[ResourceNVIDIAGPU] = *resource.NewQuantity(int64(it.GPUCount), resource.DecimalSI)
			}
		}
	}
	return capacity, allocatable
}

// overheadInputs is what allocatable arithmetic needs, shared by the EKS AMI
// and Karpenter models.
type overheadInputs struct {
	cpuMilli       int64
	memoryMiB      int64
	storageBytes   int64
	pods           int
	reservationPod int
}

func (r overheadInputs) build() (capacity, allocatable corev1.ResourceList) {
	evictStorage := (r.storageBytes*evictionNodefsPercent + 99) / 100 // rounded up
	capacity = corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(r.cpuMilli, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(r.memoryMiB*mib, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(r.storageBytes, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(r.pods), resource.DecimalSI),
	}
	allocatable = corev1.ResourceList{
		corev1.ResourceCPU: *resource.NewMilliQuantity(max(r.cpuMilli-KubeReservedCPUMilli(r.cpuMilli), 0), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(
			max(r.memoryMiB-KubeReservedMemoryMiB(r.reservationPod)-evictionMemoryMiB, 0)*mib, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(
			max(r.storageBytes-kubeReservedEphemeral-evictStorage, 0), resource.BinarySI),
		corev1.ResourcePods: *resource.NewQuantity(int64(r.pods), resource.DecimalSI),
	}
	return capacity, allocatable
}

// KarpenterOptions are the EC2NodeClass / kubelet / operator settings that
// change Karpenter's resource model. Zero values are Karpenter's defaults.
type KarpenterOptions struct {
	// AMIFamily uses Karpenter spelling: AL2023 (default), AL2, Bottlerocket,
	// Windows2019/2022/2025, Custom.
	AMIFamily string
	// MaxPods is kubelet.maxPods when positive.
	MaxPods int
	// PodsPerCore is kubelet.podsPerCore when positive (ignored by Bottlerocket).
	PodsPerCore int
	// ReservedENIs is the RESERVED_ENIS option.
	ReservedENIs int
	// VMMemoryOverheadPercent is 0.075 when zero.
	VMMemoryOverheadPercent float64
	// EphemeralStorageGiB is the root/data volume; 0 means the family
	// default (20 GiB, 50 GiB for Windows).
	EphemeralStorageGiB int
	// EphemeralStorage, when non-zero, is the volume size exactly as a
	// blockDeviceMappings entry gives it (100Gi, 100G); it wins over
	// EphemeralStorageGiB.
	EphemeralStorage resource.Quantity
	// InstanceStoreRAID0 is instanceStorePolicy: RAID0: types with local
	// NVMe then report its total (decimal GB) as ephemeral-storage.
	InstanceStoreRAID0 bool
	// KubeReserved and SystemReserved are kubelet.kubeReserved and
	// kubelet.systemReserved; a kube-reserved entry replaces the default
	// for its resource.
	KubeReserved, SystemReserved corev1.ResourceList
	// EvictionHard and EvictionSoft are kubelet.evictionHard/evictionSoft;
	// memory.available and nodefs.available (a quantity or a percentage of
	// capacity) replace the 100Mi / 10% defaults, the larger of hard and
	// soft winning. Bottlerocket ignores evictionSoft. Values that parse as
	// neither are ignored (the API rejects them upstream).
	EvictionHard, EvictionSoft map[string]string
}

// Eviction signals that change allocatable.
const (
	EvictionMemoryAvailable = "memory.available"
	EvictionNodeFSAvailable = "nodefs.available"
)

// KarpenterPods is the pods capacity Karpenter gives the type (docs/eks.md, Karpenter's view of an instance type).
func KarpenterPods(it *InstanceType, opts KarpenterOptions) int {
	windows := strings.HasPrefix(opts.AMIFamily, "Windows")
	var pods int
	switch {
	case opts.MaxPods > 0:
		pods = opts.MaxPods
	case windows:
		pods = 110
	default:
		pods = karpenterENILimitedPods(it, opts.ReservedENIs)
	}
	if opts.PodsPerCore > 0 && !strings.HasPrefix(opts.AMIFamily, "Bottlerocket") {
		pods = min(pods, opts.PodsPerCore*it.VCPU)
	}
	return pods
}

func karpenterENILimitedPods(it *InstanceType, reservedENIs int) int {
	if it.MaxENIs == 0 || it.IPv4PerENI == 0 {
		// Not in the VPC-limits table: the docs-page value stands.
		return it.MaxPodsENI
	}
	usable := max(it.MaxENIs-reservedENIs, 0)
	if usable == 0 {
		return 0
	}
	return usable*(it.IPv4PerENI-1) + 2
}

// ResourcePrivateIPv4Address is the Windows VPC resource Karpenter adds.
const ResourcePrivateIPv4Address corev1.ResourceName = "vpc.amazonaws.com/PrivateIPv4Address"

// KarpenterCapacity returns the capacity Karpenter computes for the type
// before any node of it has registered (docs/eks.md, Karpenter's view of an
// instance type): cpu, memory, ephemeral-storage, pods and the non-zero
// device resources (upstream lists zeros too; they change nothing).
func KarpenterCapacity(it *InstanceType, opts KarpenterOptions) corev1.ResourceList {
	overhead := opts.VMMemoryOverheadPercent
	if overhead == 0 {
		overhead = DefaultVMMemoryOverheadPercent
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(int64(it.VCPU)*1000, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(CapacityMemoryMiB(it, overhead)*mib, resource.BinarySI),
		corev1.ResourceEphemeralStorage: karpenterEphemeralStorage(it, opts),
		corev1.ResourcePods:             *resource.NewQuantity(int64(KarpenterPods(it, opts)), resource.DecimalSI),
	}
	for name, n := range karpenterExtended(it) {
		capacity[name] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	if IsWindowsFamily(opts.AMIFamily) && it.IPv4PerENI > 0 {
		capacity[ResourcePrivateIPv4Address] = *resource.NewQuantity(int64(it.IPv4PerENI-1), resource.DecimalSI)
	}
	return capacity
}

// karpenterEphemeralStorage picks RAID0 instance store, then the volume
// the NodeClass sets, then the family default.
func karpenterEphemeralStorage(it *InstanceType, opts KarpenterOptions) resource.Quantity {
	switch {
	case opts.InstanceStoreRAID0 && it.LocalNVMeGB > 0:
		return *resource.NewQuantity(int64(it.LocalNVMeGB)*1000*1000*1000, resource.DecimalSI)
	case !opts.EphemeralStorage.IsZero():
		return opts.EphemeralStorage.DeepCopy()
	case opts.EphemeralStorageGiB > 0:
		return *resource.NewQuantity(int64(opts.EphemeralStorageGiB)*gib, resource.BinarySI)
	case IsWindowsFamily(opts.AMIFamily):
		return *resource.NewQuantity(50*gib, resource.BinarySI)
	}
	return *resource.NewQuantity(20*gib, resource.BinarySI)
}

// KarpenterOverhead returns the three overhead lists Karpenter subtracts
// from capacity (aws/karpenter-provider-aws pkg/providers/instancetype/types.go
// kubeReservedResources, systemReservedResources, evictionThreshold).
func KarpenterOverhead(it *InstanceType, opts KarpenterOptions) (kubeReserved, systemReserved, evictionThreshold corev1.ResourceList) {
	capacity := KarpenterCapacity(it, opts)
	// AL2/AL2023/Custom size kube-reserved memory from the ENI-limited pod
	// count even when maxPods overrides capacity; the others from pods.
	reservation := karpenterENILimitedPods(it, 0)
	if IsBottlerocketFamily(opts.AMIFamily) || IsWindowsFamily(opts.AMIFamily) {
		reservation = KarpenterPods(it, opts)
	}
	cpu := capacity[corev1.ResourceCPU]
	kubeReserved = corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(KubeReservedCPUMilli(cpu.MilliValue()), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(KubeReservedMemoryMiB(reservation)*mib, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(kubeReservedEphemeral, resource.BinarySI),
	}
	for name, q := range opts.KubeReserved {
		kubeReserved[name] = q.DeepCopy()
	}
	systemReserved = corev1.ResourceList{}
	for name, q := range opts.SystemReserved {
		systemReserved[name] = q.DeepCopy()
	}
	memory, storage := capacity[corev1.ResourceMemory], capacity[corev1.ResourceEphemeralStorage]
	evictionThreshold = corev1.ResourceList{
		corev1.ResourceMemory:           *resource.NewQuantity(evictionMemoryMiB*mib, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(int64(math.Ceil(float64(storage.Value())/100*evictionNodefsPercent)), resource.DecimalSI),
	}
	signals := []map[string]string{opts.EvictionHard}
	if !IsBottlerocketFamily(opts.AMIFamily) {
		signals = append(signals, opts.EvictionSoft)
	}
	override := corev1.ResourceList{}
	for _, m := range signals {
		for signal, name := range map[string]corev1.ResourceName{
			EvictionMemoryAvailable: corev1.ResourceMemory, EvictionNodeFSAvailable: corev1.ResourceEphemeralStorage,
		} {
			v, ok := m[signal]
			if !ok {
				continue
			}
			base := memory
			if name == corev1.ResourceEphemeralStorage {
				base = storage
			}
			q, ok := evictionSignal(base, v)
			if cur, set := override[name]; ok && (!set || q.Cmp(cur) > 0) {
				override[name] = q
			}
		}
	}
	for name, q := range override {
		evictionThreshold[name] = q
	}
	return kubeReserved, systemReserved, evictionThreshold
}

// evictionSignal is a signal's amount: a quantity, or ceil(capacity * p%)
// with 100% meaning disabled (0), as the kubelet reads it.
func evictionSignal(capacity resource.Quantity, value string) (resource.Quantity, bool) {
	if p, ok := strings.CutSuffix(value, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return resource.Quantity{}, false
		}
		if f == 100 {
			f = 0
		}
		return *resource.NewQuantity(int64(math.Ceil(capacity.AsApproximateFloat64()/100*f)), resource.DecimalSI), true
	}
	q, err := resource.ParseQuantity(value)
	return q, err == nil
}

// KarpenterResources returns KarpenterCapacity and the allocatable
// capacity - (kube-reserved + system-reserved + eviction threshold), each
// resource floored at zero.
func KarpenterResources(it *InstanceType, opts KarpenterOptions) (capacity, allocatable corev1.ResourceList) {
	capacity = KarpenterCapacity(it, opts)
	kube, system, eviction := KarpenterOverhead(it, opts)
	allocatable = corev1.ResourceList{}
	for name, q := range capacity {
		a := q.DeepCopy()
		for _, l := range []corev1.ResourceList{kube, system, eviction} {
			if o, ok := l[name]; ok {
				a.Sub(o)
			}
		}
		if a.Sign() < 0 {
			a = *resource.NewQuantity(0, q.Format)
		}
		allocatable[name] = a
	}
	return capacity, allocatable
}

// KarpenterAllocatable is the allocatable half of KarpenterResources.
func KarpenterAllocatable(it *InstanceType, opts KarpenterOptions) corev1.ResourceList {
	_, allocatable := KarpenterResources(it, opts)
	return allocatable
}

// karpenterExtended lists the device resources Karpenter advertises.
func karpenterExtended(it *InstanceType) map[corev1.ResourceName]int64 {
	out := map[corev1.ResourceName]int64{}
	if it.IsNVIDIAGPU() {
		out[ResourceNVIDIAGPU] = int64(it.GPUCount)
	}
	if it.GPUManufacturer == "amd" && it.GPUCount > 0 {
		out[ResourceAMDGPU] = int64(it.GPUCount)
	}
	if (strings.HasPrefix(it.AcceleratorName, "inferentia") || strings.HasPrefix(it.AcceleratorName, "trainium")) && it.AcceleratorCount > 0 {
		out[ResourceNeuron] = int64(it.AcceleratorCount)
	}
	if it.PodENI > 0 {
		out[ResourcePodENI] = int64(it.PodENI)
	}
	if it.EFA > 0 {
		out[ResourceEFA] = int64(it.EFA)
	}
	return out
}
