// Package nodeipam is kube-controller-manager's node IPAM (the range
// allocator of --allocate-node-cidrs) for the nodes that need it: a node
// with no spec.podCIDR whose pods have no other address range (no
// InternalIP, not in the cluster VPC) gets the first free /24 of
// 10.244.0.0/16 and up, in node insertion order, as kind's control plane
// hands them out (docs/pod-networking.md).
package nodeipam

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/podnet"
)

// Name is the controller's name and its events' source component.
const Name = "cidrAllocator"

// rangeCount is how many /24 ranges the allocator has: 10.244.0.0/24 up to
// 10.255.255.0/24 (kind's 10.244.0.0/16 cluster CIDR, continued through the
// rest of 10.0.0.0/8 above it so that big node sets still get ranges).
const rangeCount = (256 - 244) * 256

// Controller implements sim.Controller.
type Controller struct{}

// New returns the node IPAM controller.
func New() *Controller { return &Controller{} }

// Name implements sim.Controller.
func (*Controller) Name() string { return "nodeipam" }

// Sync gives every node that needs one a podCIDR.
func (*Controller) Sync(s *cluster.State) (bool, error) {
	var needy []*corev1.Node
	for _, name := range insertionOrder(s) {
		if n := s.Nodes[name]; n != nil && podnet.NeedsPodCIDR(s, n) {
			needy = append(needy, n)
		}
	}
	if len(needy) == 0 {
		return false, nil
	}
	taken := make([]bool, rangeCount)
	for _, n := range s.Nodes {
		if p, ok := podnet.PodCIDR(n); ok {
			if i, ok := rangeIndex(p); ok {
				taken[i] = true
			}
		}
	}
	changed := false
	next := 0
	for _, n := range needy {
		for next < rangeCount && taken[next] {
			next++
		}
		if next == rangeCount {
			// The range allocator's failure: the node keeps no podCIDR (its
			// pods still get unique addresses, see podnet.Allocator).
			ref := cluster.Regarding("Node", "v1", n)
			if !s.HasEvent(Name, corev1.EventTypeNormal, "CIDRNotAvailable", ref) {
				s.Record(cluster.EventSource{Component: Name}, ref, corev1.EventTypeNormal, "CIDRNotAvailable",
					fmt.Sprintf("Node %s status is now: CIDRNotAvailable", n.Name))
				changed = true
			}
			continue
		}
		taken[next] = true
		cidr := rangeAt(next).String()
		n.Spec.PodCIDR = cidr
		n.Spec.PodCIDRs = []string{cidr}
		n.ResourceVersion = s.Bump()
		changed = true
	}
	return changed, nil
}

// insertionOrder is the scheduler cache's node order, then any node it does
// not list yet, by name.
func insertionOrder(s *cluster.State) []string {
	seen := make(map[string]bool, len(s.Scheduler.NodeOrder))
	out := make([]string, 0, len(s.Nodes))
	for _, name := range s.Scheduler.NodeOrder {
		if _, ok := s.Nodes[name]; ok && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	if len(out) == len(s.Nodes) {
		return out
	}
	for _, name := range cluster.SortedKeys(s.Nodes) {
		if !seen[name] {
			out = append(out, name)
		}
	}
	return out
}

func rangeAt(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(244 + i/256), byte(i % 256), 0}), 24)
}

// rangeIndex is the allocator's index of p, if p is one of its ranges.
func rangeIndex(p netip.Prefix) (int, bool) {
	if !p.Addr().Is4() || p.Bits() != 24 {
		return 0, false
	}
	b := p.Addr().As4()
	if b[0] != 10 || b[1] < 244 {
		return 0, false
	}
	return int(b[1]-244)*256 + int(b[2]), true
}
