package aws

import (
	"regexp"
	"strings"
	"testing"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestIdentifiers(t *testing.T) {
	s1, s2 := cluster.New("", 3), cluster.New("", 3)
	id1, id2 := InstanceID(s1), InstanceID(s2)
	if id1 != id2 {
		t.Errorf("same seed, different instance IDs %s %s", id1, id2)
	}
	if InstanceID(s1) == id1 {
		t.Error("consecutive instance IDs are equal")
	}
	tests := []struct {
		name, got, pattern string
	}{
		{"instance", id1, `^i-0[0-9a-f]{16}$`},
		{"ami", AMIID("us-west-2", "AmazonLinux2023", "arm64"), `^ami-0[0-9a-f]{16}$`},
		{"launch template", LaunchTemplateID("c", "ng"), `^lt-0[0-9a-f]{16}$`},
		{"provider", ProviderID("us-east-1a", "i-08736224042c4ee75"), `^aws:///us-east-1a/i-08736224042c4ee75$`},
		{"kubelet", KubeletVersion("1.34"), `^v1\.34\.2-eks-[0-9a-f]{7}$`},
		{"kubelet full", KubeletVersion("1.31.4"), `^v1\.31\.4-eks-[0-9a-f]{7}$`},
		{"kubelet unknown minor", KubeletVersion("1.40"), `^v1\.40\.0-eks-[0-9a-f]{7}$`},
	}
	for _, tt := range tests {
		if !regexp.MustCompile(tt.pattern).MatchString(tt.got) {
			t.Errorf("%s: %q does not match %s", tt.name, tt.got, tt.pattern)
		}
	}
	if AMIID("us-west-2", "AmazonLinux2023", "arm64") == AMIID("us-west-2", "AmazonLinux2023", "amd64") {
		t.Error("AMI ID ignores the architecture")
	}
	if AMIID("us-west-2", "AmazonLinux2023", "arm64") != AMIID("us-west-2", "AmazonLinux2023", "arm64") {
		t.Error("AMI ID is not stable")
	}
}

func TestNodeSystemInfo(t *testing.T) {
	tests := []struct {
		family, arch, k8s string
		os, image, kernel string
	}{
		{"", "arm64", "1.34", "linux", "Amazon Linux 2023", "aarch64"},
		{AMIFamilyAmazonLinux2, "amd64", "1.30", "linux", "Amazon Linux 2", "x86_64"},
		{AMIFamilyBottlerocket, "amd64", "1.33", "linux", "Bottlerocket OS 1.51.0 (aws-k8s-1.33)", ""},
		{AMIFamilyWindows2022, "amd64", "1.34", "windows", "Windows Server 2022", ""},
		{AMIFamilyUbuntu2204, "amd64", "1.34", "linux", "Ubuntu 22.04", ""},
	}
	for _, tt := range tests {
		info := NodeSystemInfo(tt.family, tt.arch, tt.k8s)
		if info.OperatingSystem != tt.os || info.Architecture != tt.arch || !strings.HasPrefix(info.OSImage, tt.image) ||
			!strings.HasSuffix(info.KernelVersion, tt.kernel) || !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://") ||
			!strings.HasPrefix(info.KubeletVersion, "v"+tt.k8s+".") {
			t.Errorf("NodeSystemInfo(%q, %q, %q) = %+v", tt.family, tt.arch, tt.k8s, info)
		}
	}
}
