package fargate

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// UnsupportedPrefix starts fargate-scheduler's FailedScheduling message for
// a pod Fargate cannot run (docs/fargate.md#what-cannot-run-on-fargate).
const UnsupportedPrefix = "Pod not supported on Fargate: "

// efsDriver is the only CSI driver whose volumes Fargate mounts (EFS,
// statically provisioned).
const efsDriver = "efs.csi.aws.com"

// Unsupported returns fargate-scheduler's message for a pod Fargate cannot
// run, or "" when it can. The parts come in EKS's order: host namespaces,
// security context, host ports, volumes; then berth's own wording for
// accelerators and for requests beyond the largest size, which EKS's
// observed messages do not show (docs/fargate.md).
func Unsupported(s *cluster.State, pod *corev1.Pod) string {
	var parts []string
	var fields []string
	if pod.Spec.HostNetwork {
		fields = append(fields, "HostNetwork")
	}
	if pod.Spec.HostPID {
		fields = append(fields, "HostPID")
	}
	if pod.Spec.HostIPC {
		fields = append(fields, "HostIPC")
	}
	if len(fields) > 0 {
		parts = append(parts, "fields not supported: "+strings.Join(fields, ", "))
	}
	privileged, hostPort := false, false
	var accelerators []string
	seenAcc := map[string]bool{}
	each := func(cs []corev1.Container) {
		for _, c := range cs {
			if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
				privileged = true
			}
			for _, p := range c.Ports {
				if p.HostPort != 0 || p.HostIP != "" {
					hostPort = true
				}
			}
			for name := range c.Resources.Requests {
				if isAccelerator(name) && !seenAcc[string(name)] {
					seenAcc[string(name)] = true
					accelerators = append(accelerators, string(name))
				}
			}
			for name := range c.Resources.Limits {
				if isAccelerator(name) && !seenAcc[string(name)] {
					seenAcc[string(name)] = true
					accelerators = append(accelerators, string(name))
				}
			}
		}
	}
	each(pod.Spec.InitContainers)
	each(pod.Spec.Containers)
	if privileged {
		parts = append(parts, "invalid SecurityContext fields: Privileged")
	}
	if hostPort {
		parts = append(parts, "port contains HostIP or HostPort")
	}
	if v := unsupportedVolumes(s, pod); v != "" {
		parts = append(parts, "volumes not supported: "+v)
	}
	if len(accelerators) > 0 {
		sort.Strings(accelerators)
		parts = append(parts, "resources not supported: "+strings.Join(accelerators, ", "))
	}
	cpu, mem := PodRequests(pod)
	if _, ok := SizeFor(cpu, mem); !ok {
		l := Largest()
		parts = append(parts, fmt.Sprintf("requests of %s vCPU and %d MiB (plus %d MiB for Kubernetes components) exceed the largest Fargate configuration, %s",
			trimMilli(cpu), (mem+(1<<20)-1)>>20, KubeReservedMiB, l))
	}
	if len(parts) == 0 {
		return ""
	}
	return UnsupportedPrefix + strings.Join(parts, ", ")
}

// isAccelerator: GPUs and AWS's Inferentia/Trainium devices.
func isAccelerator(name corev1.ResourceName) bool {
	switch {
	case strings.HasSuffix(string(name), "/gpu"):
		return true
	case name == "aws.amazon.com/neuron", name == "aws.amazon.com/neuroncore", name == "aws.amazon.com/neurondevice":
		return true
	}
	return false
}

// unsupportedVolumes describes the first volume Fargate cannot mount:
// host paths, EBS and any claim not backed by EFS.
func unsupportedVolumes(s *cluster.State, pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.HostPath != nil, v.AWSElasticBlockStore != nil, v.NFS != nil, v.ISCSI != nil, v.FC != nil:
			return fmt.Sprintf("%s is of an unsupported volume Type", v.Name)
		case v.CSI != nil && v.CSI.Driver != efsDriver:
			return fmt.Sprintf("%s is of an unsupported volume Type", v.Name)
		case v.Ephemeral != nil:
			return fmt.Sprintf("%s is of an unsupported volume Type", v.Name)
		case v.PersistentVolumeClaim != nil:
			name := v.PersistentVolumeClaim.ClaimName
			pvc, ok := s.PersistentVolumeClaims[cluster.Key(pod.Namespace, name)]
			if !ok {
				return fmt.Sprintf("persistence not supported because: persistentvolumeclaim %q not found", name)
			}
			if !efsClaim(s, pvc) {
				return fmt.Sprintf("%s is of an unsupported volume Type", v.Name)
			}
		}
	}
	return ""
}

// efsClaim: the claim is bound to an EFS volume, or its class provisions
// with the EFS driver.
func efsClaim(s *cluster.State, pvc *corev1.PersistentVolumeClaim) bool {
	if pv, ok := s.PersistentVolumes[pvc.Spec.VolumeName]; ok && pvc.Spec.VolumeName != "" {
		return pv.Spec.CSI != nil && pv.Spec.CSI.Driver == efsDriver
	}
	if pvc.Spec.StorageClassName != nil {
		if sc, ok := s.StorageClasses[*pvc.Spec.StorageClassName]; ok {
			return sc.Provisioner == efsDriver
		}
	}
	return false
}

func trimMilli(m int64) string {
	return Size{MilliCPU: m}.VCPU()
}
