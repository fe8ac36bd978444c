package aws

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// eksPatch is a plausible EKS patch release per minor version, for the
// kubelet version nodes report. Unknown minors report patch 0.
var eksPatch = map[string]string{
	"1.28": "15", "1.29": "15", "1.30": "14", "1.31": "13",
	"1.32": "9", "1.33": "5", "1.34": "2", "1.35": "0",
}

// KubeletVersion is what an EKS AMI's kubelet reports for a cluster
// version: 1.34 -> v1.34.2-eks-<7 hex>. A full x.y.z version is kept as is.
func KubeletVersion(kubernetesVersion string) string {
	v := strings.TrimPrefix(kubernetesVersion, "v")
	if strings.Count(v, ".") == 1 {
		patch, ok := eksPatch[v]
		if !ok {
			patch = "0"
		}
		v += "." + patch
	}
	return "v" + v + "-eks-" + stableHex("kubelet", v)[:7]
}

// NodeSystemInfo returns the status.nodeInfo fields fixed by the AMI: OS
// image, kernel, container runtime, kubelet. Machine, system and boot IDs are
// per instance and left to the caller.
func NodeSystemInfo(amiFamily, arch, kubernetesVersion string) corev1.NodeSystemInfo {
	if amiFamily == "" {
		amiFamily = DefaultAMIFamily
	}
	kernelArch := "x86_64"
	if arch == "arm64" {
		kernelArch = "aarch64"
	}
	info := corev1.NodeSystemInfo{
		Architecture:    arch,
		OperatingSystem: OSForAMIFamily(amiFamily),
		KubeletVersion:  KubeletVersion(kubernetesVersion),
	}
	minor := strings.TrimPrefix(kubernetesVersion, "v")
	if parts := strings.SplitN(minor, ".", 3); len(parts) >= 2 {
		minor = parts[0] + "." + parts[1]
	}
	switch {
	case amiFamily == AMIFamilyAmazonLinux2:
		info.OSImage = "Amazon Linux 2"
		info.KernelVersion = "5.10.245-241.978.amzn2." + kernelArch
		info.ContainerRuntimeVersion = "containerd://1.7.27"
	case IsBottlerocketFamily(amiFamily):
		info.OSImage = "Bottlerocket OS 1.51.0 (aws-k8s-" + minor + ")"
		info.KernelVersion = "6.12.55"
		info.ContainerRuntimeVersion = "containerd://2.1.4+bottlerocket"
	case strings.HasPrefix(amiFamily, "Ubuntu") || strings.HasPrefix(amiFamily, "UbuntuPro"):
		info.OSImage = "Ubuntu 24.04.3 LTS"
		if strings.Contains(amiFamily, "2204") {
			info.OSImage = "Ubuntu 22.04.5 LTS"
		}
		info.KernelVersion = "6.8.0-1040-aws"
		info.ContainerRuntimeVersion = "containerd://1.7.28"
	case IsWindowsFamily(amiFamily):
		info.OSImage = "Windows Server 2022 Datacenter"
		info.KernelVersion = "10.0.20348.4405"
		if strings.Contains(amiFamily, "2019") {
			info.OSImage = "Windows Server 2019 Datacenter"
			info.KernelVersion = "10.0.17763.8027"
		}
		info.ContainerRuntimeVersion = "containerd://1.7.27"
	default: // AmazonLinux2023 and anything unknown
		info.OSImage = "Amazon Linux 2023.9.20251208"
		info.KernelVersion = "6.12.58-82.121.amzn2023." + kernelArch
		info.ContainerRuntimeVersion = "containerd://2.1.5"
	}
	return info
}
