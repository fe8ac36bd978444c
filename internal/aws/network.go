package aws

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

// DefaultVPCCIDR is eksctl's default VPC CIDR.
const DefaultVPCCIDR = "192.168.0.0/16"

// awsReservedLow is how many addresses at the start of every subnet AWS
// keeps (network, VPC router, DNS, future use); the last one is broadcast.
const awsReservedLow = 4

// Subnet is one subnet of the cluster VPC.
type Subnet struct {
	Zone    string
	CIDR    string
	Private bool
}

// Region is the cluster's region, eksctl's default when unset.
func Region(info cluster.Info) string {
	if info.Region != "" {
		return info.Region
	}
	return DefaultRegion
}

// ClusterZones are the cluster's availability zones in order: those named
// in the ClusterConfig, else the region's default three.
func ClusterZones(info cluster.Info) []string {
	if len(info.Zones) > 0 {
		return info.Zones
	}
	return DefaultZones(Region(info))
}

// VPCSubnets splits the VPC as eksctl does: into 8 equal subnets (16 when
// more than four zones), public subnets first, one per zone in order, then
// private ones. 192.168.0.0/16 over three zones gives public
// 192.168.0.0/19, .32.0/19, .64.0/19 and private .96.0/19, .128.0/19, .160.0/19.
func VPCSubnets(vpcCIDR string, zones []string) ([]Subnet, error) {
	if vpcCIDR == "" {
		vpcCIDR = DefaultVPCCIDR
	}
	vpc, err := netip.ParsePrefix(vpcCIDR)
	if err != nil || !vpc.Addr().Is4() {
		return nil, fmt.Errorf("VPC CIDR %q is not an IPv4 CIDR", vpcCIDR)
	}
	vpc = vpc.Masked()
	extra := 3
	if 2*len(zones) > 8 {
		extra = 4
	}
	if 2*len(zones) > 1<<extra {
		return nil, fmt.Errorf("too many zones (%d) for one VPC", len(zones))
	}
	bits := vpc.Bits() + extra
	if bits > 28 {
		return nil, fmt.Errorf("VPC CIDR %q is too small to split into subnets", vpcCIDR)
	}
	base := ipToUint(vpc.Addr())
	nth := func(i int) string {
		addr := uintToIP(base + uint32(i)<<(32-bits))
		return netip.PrefixFrom(addr, bits).String()
	}
	var out []Subnet
	for i, z := range zones {
		out = append(out, Subnet{Zone: z, CIDR: nth(i)})
	}
	for i, z := range zones {
		out = append(out, Subnet{Zone: z, CIDR: nth(len(zones) + i), Private: true})
	}
	return out, nil
}

// PrivateSubnet is the CIDR of zone's private subnet, where node-group
// instances land.
func PrivateSubnet(info cluster.Info, zone string) (string, error) {
	zones := ClusterZones(info)
	subnets, err := VPCSubnets(info.VPCCIDR, zones)
	if err != nil {
		return "", err
	}
	for _, sn := range subnets {
		if sn.Private && sn.Zone == zone {
			return sn.CIDR, nil
		}
	}
	return "", fmt.Errorf("zone %q is not one of the cluster's availability zones (%s)", zone, strings.Join(zones, ", "))
}

// HasClusterVPC reports whether the state models a cluster VPC: only a
// ClusterConfig brings one. A state built from Node manifests alone has no
// region, zones or subnets of its own (docs/pod-networking.md).
func HasClusterVPC(info cluster.Info) bool { return info.Name != "" }

// ClusterSubnetForNode is the cluster subnet a node's pods take addresses
// from (the VPC CNI gives pods addresses of the node's own subnet): the
// subnet holding the node's InternalIP, else the private subnet of its zone.
// ok is false when the state has no cluster VPC or the node is in neither.
func ClusterSubnetForNode(s *cluster.State, node *corev1.Node) (cidr string, ok bool) {
	if !HasClusterVPC(s.Info) {
		return "", false
	}
	zones := ClusterZones(s.Info)
	subnets, err := VPCSubnets(s.Info.VPCCIDR, zones)
	if err != nil {
		return "", false
	}
	for _, a := range node.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		ip, err := netip.ParseAddr(a.Address)
		if err != nil {
			continue
		}
		for _, sn := range subnets {
			if netip.MustParsePrefix(sn.CIDR).Contains(ip) {
				return sn.CIDR, true
			}
		}
	}
	zone := node.Labels[corev1.LabelTopologyZone]
	for _, sn := range subnets {
		if sn.Private && zone != "" && sn.Zone == zone {
			return sn.CIDR, true
		}
	}
	return "", false
}

// NodeName is the EC2 private DNS name that EKS AMIs use as the node name:
// ip-10-42-10-138.us-west-2.compute.internal, or ip-...ec2.internal in us-east-1.
func NodeName(region, ip string) string {
	host := "ip-" + strings.ReplaceAll(ip, ".", "-")
	if region == "us-east-1" {
		return host + ".ec2.internal"
	}
	return host + "." + region + ".compute.internal"
}

// UsedIPs collects every address already taken in the state: node
// InternalIPs and pod IPs. Callers allocating many addresses build it once
// and pass it to AllocateIPFrom.
func UsedIPs(s *cluster.State) map[string]bool {
	used := map[string]bool{}
	for _, n := range s.Nodes {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				used[a.Address] = true
			}
		}
	}
	// The EKS control plane's ENIs hold addresses in the cluster's subnets
	// too; the kubernetes Service's endpoints list them (docs/services.md).
	if ep, ok := s.Endpoints[cluster.Key(corev1.NamespaceDefault, "kubernetes")]; ok {
		for _, sub := range ep.Subsets {
			for _, a := range sub.Addresses {
				used[a.IP] = true
			}
		}
	}
	for _, p := range s.Pods {
		if p.Spec.HostNetwork {
			continue // a host-network pod shares its node's address
		}
		if p.Status.PodIP != "" {
			used[p.Status.PodIP] = true
		}
		for _, ip := range p.Status.PodIPs {
			used[ip.IP] = true
		}
	}
	return used
}

// AllocateIP draws an unused address of cidr with the state's random source.
func AllocateIP(s *cluster.State, cidr string) (string, error) {
	return AllocateIPFrom(s, cidr, UsedIPs(s))
}

// AllocateIPFrom draws an address of cidr not in used, skipping the four
// addresses AWS reserves at the start of a subnet and the broadcast address,
// and marks it used. Equal state and used set give equal results.
func AllocateIPFrom(s *cluster.State, cidr string, used map[string]bool) (string, error) {
	return DrawSubnetIP(&s.Rand, cidr, used)
}

// DrawSubnetIP is AllocateIPFrom with its own random source r.
func DrawSubnetIP(r *cluster.Rand, cidr string, used map[string]bool) (string, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() {
		return "", fmt.Errorf("subnet %q is not an IPv4 CIDR", cidr)
	}
	p = p.Masked()
	size := uint64(1) << (32 - p.Bits())
	if size <= awsReservedLow+1 {
		return "", fmt.Errorf("subnet %s has no assignable addresses", cidr)
	}
	first := AddrAdd(p.Addr(), awsReservedLow)
	ip, ok := DrawAddress(r, first, size-awsReservedLow-1, uint64(len(used)), func(a netip.Addr) bool { return used[a.String()] })
	if !ok {
		return "", fmt.Errorf("subnet %s has no free addresses", cidr)
	}
	used[ip.String()] = true
	return ip.String(), nil
}

func ipToUint(a netip.Addr) uint32 {
	b := a.As4()
	return binary.BigEndian.Uint32(b[:])
}

func uintToIP(n uint32) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], n)
	return netip.AddrFrom4(b)
}
