// Package podnet decides where a pod's IP address comes from on any node —
// an EKS node in the cluster VPC, an EC2 node from another cluster, or a
// kind, GKE or on-premises node — and hands addresses out. The rules are
// written down in docs/pod-networking.md.
package podnet

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// Prefix lengths assumed for the subnet around a node's InternalIP when
// nothing better is known (docs/pod-networking.md):
//
//   - EC2 nodes: /19, the private-subnet size of eksctl's default layout
//     (a /16 VPC split in eight), the commonest EKS subnet;
//   - other nodes: /24, the per-node range kube-controller-manager's node
//     IPAM hands out by default (--node-cidr-mask-size=24);
//   - IPv6 addresses: /64, the only IPv6 subnet size AWS allows and the
//     IPv6 default of node IPAM.
const (
	ec2InternalIPBits   = 19
	otherInternalIPBits = 24
	ipv6SubnetBits      = 64
)

// Reserved addresses of a range: AWS keeps the first four and the last
// address of every subnet; host-local IPAM (kind's kindnet, flannel,
// bridge) skips the network address and the gateway (the first host) and,
// in IPv4, the broadcast address.
const (
	vpcReservedLow       = 4
	hostLocalReservedLow = 2
)

// Pool is the range one node's pods take addresses from.
type Pool struct {
	Prefix netip.Prefix
	// VPC is true for an AWS subnet (the VPC CNI's secondary addresses),
	// false for a node-local range handed out by host-local IPAM.
	VPC bool
	// EC2 is true when the node runs the VPC CNI: its failures read as
	// aws-cni's, and its ENIs bound how many addresses it holds.
	EC2 bool
	// NodeLimit is the VPC CNI's per-node address limit, 0 for none.
	NodeLimit int
}

// PoolFor returns the pool of a node's pods; ok is false when the node gives
// nothing to derive one from (no podCIDR, no InternalIP, not in the cluster
// VPC) — the node IPAM controller then assigns it a podCIDR.
//
// EC2 nodes (aws.IsEC2Node) use the VPC CNI: the cluster subnet holding the
// node, else the /19 around its InternalIP, else its spec.podCIDR as a
// stand-in for the unknown subnet. Other nodes use spec.podCIDR, else the
// /24 around their InternalIP.
func PoolFor(s *cluster.State, node *corev1.Node) (Pool, bool) {
	ec2 := aws.IsEC2Node(node)
	limit, _ := aws.PodIPCapacity(node)
	ip, hasIP := internalIP(node)
	if ec2 {
		p := Pool{VPC: true, EC2: true, NodeLimit: limit}
		if cidr, ok := aws.ClusterSubnetForNode(s, node); ok {
			p.Prefix = netip.MustParsePrefix(cidr)
			return p, true
		}
		if hasIP {
			p.Prefix = around(ip, ec2InternalIPBits)
			return p, true
		}
		if cidr, ok := PodCIDR(node); ok {
			p.Prefix, p.VPC = cidr, false
			return p, true
		}
		return Pool{}, false
	}
	if cidr, ok := PodCIDR(node); ok {
		return Pool{Prefix: cidr}, true
	}
	if hasIP {
		return Pool{Prefix: around(ip, otherInternalIPBits)}, true
	}
	return Pool{}, false
}

// NeedsPodCIDR reports whether the node IPAM controller must give the node a
// podCIDR so that its pods have a range: it has none and PoolFor finds
// nothing else. Cheap for the common case of a node with an address.
func NeedsPodCIDR(s *cluster.State, node *corev1.Node) bool {
	if _, ok := PodCIDR(node); ok {
		return false
	}
	if _, ok := internalIP(node); ok {
		return false
	}
	_, ok := PoolFor(s, node)
	return !ok
}

// PodCIDR is the node's first spec.podCIDRs entry (else spec.podCIDR), if
// it parses.
func PodCIDR(node *corev1.Node) (netip.Prefix, bool) {
	cidr := node.Spec.PodCIDR
	if len(node.Spec.PodCIDRs) > 0 {
		cidr = node.Spec.PodCIDRs[0]
	}
	if cidr == "" {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

func internalIP(node *corev1.Node) (netip.Addr, bool) {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ip, err := netip.ParseAddr(a.Address)
			if err == nil {
				return ip.Unmap(), true
			}
		}
	}
	return netip.Addr{}, false
}

// around is the subnet of the given size holding ip (IPv6: always /64).
func around(ip netip.Addr, v4Bits int) netip.Prefix {
	bits := v4Bits
	if ip.Is6() {
		bits = ipv6SubnetBits
	}
	p, _ := ip.Prefix(bits)
	return p
}

// maxRangeSize caps the addresses considered in a huge range (an IPv6 /48,
// a /8 podCIDR): far more than any simulated cluster uses, and it keeps the
// arithmetic in 64 bits.
const maxRangeSize = uint64(1) << 62

// usable is the first assignable address of the pool and how many there are.
func (p Pool) usable() (first netip.Addr, n uint64) {
	hostBits := p.Prefix.Addr().BitLen() - p.Prefix.Bits()
	size := maxRangeSize
	if hostBits < 62 {
		size = uint64(1) << hostBits
	}
	low, high := uint64(hostLocalReservedLow), uint64(0)
	if p.VPC {
		low, high = vpcReservedLow, 1
	} else if p.Prefix.Addr().Is4() {
		high = 1 // broadcast
	}
	if size <= low+high {
		return p.Prefix.Addr(), 0
	}
	n = size - low - high
	return aws.AddrAdd(p.Prefix.Addr(), low), n
}
