package aws

import (
	"fmt"
	"hash/fnv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// InstanceID draws an EC2 instance ID (i- and 17 hex digits, the first 0 as
// in current IDs) from the state's random source.
func InstanceID(s *cluster.State) string {
	return fmt.Sprintf("i-0%016x", s.Rand.Uint64())
}

// ProviderID is a node's spec.providerID: aws:///<zone>/<instance-id>.
func ProviderID(zone, instanceID string) string {
	return "aws:///" + zone + "/" + instanceID
}

// AMIID is a stable, plausible AMI ID for an (region, AMI family, arch)
// triple; the same inputs always name the same image, as a real region's
// recommended EKS AMI does at one point in time.
func AMIID(region, amiFamily, arch string) string {
	return "ami-0" + stableHex(region, amiFamily, arch)
}

// LaunchTemplateID is a stable, plausible launch-template ID for the
// template eksctl creates for a node group.
func LaunchTemplateID(clusterName, nodeGroup string) string {
	return "lt-0" + stableHex("launch-template", clusterName, nodeGroup)
}

// stableHex hashes its parts into 16 hex digits.
func stableHex(parts ...string) string {
	h := fnv.New64a()
	h.Write([]byte(strings.Join(parts, "\x00")))
	return fmt.Sprintf("%016x", h.Sum64())
}

// SubnetID is a stable, plausible ID for the cluster's private subnet in a
// zone.
func SubnetID(clusterName, zone string) string {
	return "subnet-0" + stableHex("subnet", clusterName, zone)
}

// SecurityGroupID is a stable, plausible ID for the cluster's node
// security group.
func SecurityGroupID(clusterName string) string {
	return "sg-0" + stableHex("security-group", clusterName)
}

// BootedSystemInfo is a node's system info as a freshly booted EC2
// instance of the AMI family reports it: the family's OS and kubelet, and
// machine, system and boot IDs drawn from the cluster's seeded source.
func BootedSystemInfo(s *cluster.State, amiFamily, arch string) corev1.NodeSystemInfo {
	info := NodeSystemInfo(amiFamily, arch, s.Info.KubernetesVersion)
	info.MachineID = fmt.Sprintf("ec2%016x%013x", s.Rand.Uint64(), s.Rand.Uint64()>>12)
	info.SystemUUID = "ec2" + s.NewUID()[3:]
	info.BootID = s.NewUID()
	return info
}

// VPCSubnetID is a stable, plausible ID for one subnet of the cluster VPC:
// SubnetID for a private subnet, a distinct one for a public subnet.
func VPCSubnetID(clusterName string, sn Subnet) string {
	if sn.Private {
		return SubnetID(clusterName, sn.Zone)
	}
	return "subnet-0" + stableHex("public-subnet", clusterName, sn.Zone)
}
