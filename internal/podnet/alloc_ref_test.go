package podnet

// The allocator as it was before the per-node slots (session 24 round 2),
// kept to check that the slots hand out the same addresses and failures in
// the same order, from the same random draws (TestAllocatorMatchesReference).

import (
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// refAllocator hands out pod addresses during one kubelet sync. It collects
// what is in use lazily and once, so a sync that starts no pod costs nothing
// and one that starts thousands scans the state once.
type refAllocator struct {
	s      *cluster.State
	used   map[netip.Addr]bool
	sorted []netip.Addr            // in use when built, for counting per pool
	inPool map[netip.Prefix]uint64 // in use per pool: counted once, then kept up to date
	onNode map[string]int          // pods holding an address, per node
	pools  map[string]*Pool        // per node name; nil when the node has none
}

// newRefAllocator returns an allocator over the state's current addresses.
func newRefAllocator(s *cluster.State) *refAllocator { return &refAllocator{s: s} }

// Allocate gives a pod on node an address of the node's pool. Failures are
// the CNI plugin's message: the node's ENIs hold no
// more addresses, or its range has none left. A node without any pool (no
// podCIDR yet) still gets a unique address, so its pods run.
func (a *refAllocator) Allocate(node *corev1.Node) (string, error) {
	// A Fargate node is one pod's micro-VM: the pod has the node's own
	// address (docs/fargate.md#the-node).
	if node.Labels[aws.LabelComputeType] == "fargate" {
		for _, addr := range node.Status.Addresses {
			if addr.Type == corev1.NodeInternalIP {
				return addr.Address, nil
			}
		}
	}
	a.build()
	pool := a.poolOf(node)
	if pool == nil {
		return a.fallback(node), nil
	}
	if pool.NodeLimit > 0 && a.onNode[node.Name] >= pool.NodeLimit {
		return "", pool.exhausted()
	}
	first, n := pool.usable()
	if a.countIn(*pool, first, n) >= n {
		return "", pool.exhausted()
	}
	ip, ok := a.draw(first, n)
	if !ok {
		return "", pool.exhausted()
	}
	a.take(ip, node)
	a.inPool[pool.Prefix]++
	return ip.String(), nil
}

// poolOf caches PoolFor per node for the sync: thousands of pods waiting
// for an address are retried on every pass.
func (a *refAllocator) poolOf(node *corev1.Node) *Pool {
	if p, ok := a.pools[node.Name]; ok {
		return p
	}
	var pool *Pool
	if p, ok := PoolFor(a.s, node); ok {
		pool = &p
	}
	a.pools[node.Name] = pool
	return pool
}

func (a *refAllocator) build() {
	if a.used != nil {
		return
	}
	a.used = map[netip.Addr]bool{}
	a.inPool = map[netip.Prefix]uint64{}
	a.onNode = map[string]int{}
	a.pools = map[string]*Pool{}
	mark := func(s string) {
		if ip, err := netip.ParseAddr(s); err == nil {
			a.used[ip.Unmap()] = true
		}
	}
	for _, n := range a.s.Nodes {
		for _, addr := range n.Status.Addresses {
			if addr.Type == corev1.NodeInternalIP {
				mark(addr.Address)
			}
		}
	}
	for _, p := range a.s.Pods {
		if p.Spec.HostNetwork || p.Status.PodIP == "" || cluster.IsTerminal(p) {
			// A host-network pod shares its node's address; a finished
			// pod's sandbox is gone and its address back in the pool.
			continue
		}
		mark(p.Status.PodIP)
		for _, ip := range p.Status.PodIPs {
			mark(ip.IP)
		}
		if p.Spec.NodeName != "" {
			a.onNode[p.Spec.NodeName]++
		}
	}
	a.sorted = make([]netip.Addr, 0, len(a.used))
	for ip := range a.used {
		a.sorted = append(a.sorted, ip)
	}
	sort.Slice(a.sorted, func(i, j int) bool { return a.sorted[i].Less(a.sorted[j]) })
}

// countIn is how many usable addresses of the pool are taken. Pools of
// different nodes may overlap, so it is a hint: draw has the last word.
func (a *refAllocator) countIn(p Pool, first netip.Addr, n uint64) uint64 {
	if c, ok := a.inPool[p.Prefix]; ok {
		return c
	}
	var c uint64
	if n > 0 {
		last := aws.AddrAdd(first, n-1)
		lo := sort.Search(len(a.sorted), func(i int) bool { return !a.sorted[i].Less(first) })
		hi := sort.Search(len(a.sorted), func(i int) bool { return last.Less(a.sorted[i]) })
		if hi > lo {
			c = uint64(hi - lo)
		}
	}
	a.inPool[p.Prefix] = c
	return c
}

// draw picks a free address of the n starting at first, as node addresses
// are drawn (so EKS clusters keep their addresses).
func (a *refAllocator) draw(first netip.Addr, n uint64) (netip.Addr, bool) {
	return aws.DrawAddress(&a.s.Rand, first, n, uint64(len(a.used)), func(ip netip.Addr) bool { return a.used[ip] })
}

func (a *refAllocator) take(ip netip.Addr, node *corev1.Node) {
	a.used[ip] = true
	a.onNode[node.Name]++
}

// fallback is a unique address in 10.0.0.0/8 derived from the state's write
// counter, for a node with no range at all (node IPAM out of ranges).
func (a *refAllocator) fallback(node *corev1.Node) string {
	for n := a.s.ResourceVersion; ; n++ {
		v := uint32(n & 0xffffff)
		ip := netip.AddrFrom4([4]byte{10, byte(v >> 16), byte(v >> 8), byte(v)})
		if !a.used[ip] {
			a.take(ip, node)
			return ip.String()
		}
	}
}
