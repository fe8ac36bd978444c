package fargate

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Size is a Fargate configuration: vCPU in millicores, memory in MiB.
type Size struct {
	MilliCPU  int64
	MemoryMiB int64
}

// KubeReservedMiB is what EKS adds to a pod's memory request for kubelet,
// kube-proxy and containerd before choosing a size.
const KubeReservedMiB = 256

// Sizes are the vCPU and memory combinations Fargate offers on EKS, in
// ascending vCPU order and, within one vCPU, ascending memory
// (docs/fargate.md#sizing).
var Sizes = func() []Size {
	var out []Size
	row := func(milliCPU, fromGB, toGB, stepGB int64) {
		for gb := fromGB; gb <= toGB; gb += stepGB {
			out = append(out, Size{milliCPU, gb * 1024})
		}
	}
	out = append(out, Size{250, 512})
	row(250, 1, 2, 1)
	row(500, 1, 4, 1)
	row(1000, 2, 8, 1)
	row(2000, 4, 16, 1)
	row(4000, 8, 30, 1)
	row(8000, 16, 60, 4)
	row(16000, 32, 120, 8)
	return out
}()

// Largest is the biggest size (16 vCPU, 120 GB).
func Largest() Size { return Sizes[len(Sizes)-1] }

// String is the CapacityProvisioned annotation's form: "0.25vCPU 0.5GB".
func (z Size) String() string { return z.VCPU() + "vCPU " + z.GB() + "GB" }

// VCPU prints the vCPUs without trailing zeros ("0.25", "2").
func (z Size) VCPU() string { return strconv.FormatFloat(float64(z.MilliCPU)/1000, 'f', -1, 64) }

// GB prints the memory in GB (GiB) without trailing zeros ("0.5", "9").
func (z Size) GB() string { return strconv.FormatFloat(float64(z.MemoryMiB)/1024, 'f', -1, 64) }

// PodRequests are the pod's effective requests as the scheduler counts
// them: the larger of the init containers' maximum and the sum of the
// long-running containers (sidecars included), which is EKS's rule.
func PodRequests(pod *corev1.Pod) (milliCPU, memoryBytes int64) {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	return reqs.Cpu().MilliValue(), reqs.Memory().Value()
}

// SizeFor is the smallest configuration holding the requests once
// KubeReservedMiB is added to the memory; ok is false when even the
// largest does not.
func SizeFor(milliCPU, memoryBytes int64) (Size, bool) {
	mib := (memoryBytes+(1<<20)-1)>>20 + KubeReservedMiB
	for _, z := range Sizes {
		if z.MilliCPU >= milliCPU && z.MemoryMiB >= mib {
			return z, true
		}
	}
	return Size{}, false
}

// ParseSize reads a CapacityProvisioned annotation back; ok is false for
// anything else.
func ParseSize(s string) (Size, bool) {
	for _, z := range Sizes {
		if z.String() == s {
			return z, true
		}
	}
	return Size{}, false
}
