package podnet

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

// The CNI plugins' answers when no address is left, as libcni wraps them
// ("plugin type=%q name=%q failed (add): %w"); the kubelet puts them into
// its FailedCreatePodSandBox event (docs/pod-networking.md).
const (
	// amazon-vpc-cni-k8s cmd/routed-eni-cni-plugin/cni.go, when ipamd has
	// no address for the pod. The aws-cni entry of the VPC CNI's conflist is
	// named aws-cni, so libcni prints both type and name.
	awsCNIExhausted = `plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container`
	// containernetworking/plugins host-local allocator, under the ptp plugin
	// as kind's kindnet configures it (its entry has no name of its own).
	hostLocalExhausted = `plugin type="ptp" failed (add): failed to allocate for range 0: no IP addresses available in range set: %s-%s`
)

// Allocator hands out pod addresses during one kubelet sync. It collects
// what is in use lazily and once, so a sync that starts no pod costs nothing
// and one that starts thousands scans the state once.
type Allocator struct {
	s      *cluster.State
	used   map[netip.Addr]bool
	sorted []netip.Addr            // in use when built, for counting per pool
	inPool map[netip.Prefix]uint64 // in use per pool: counted once, then kept up to date
	onNode map[string]int          // pods holding an address, per node
	pools  map[string]*Pool        // per node name; nil when the node has none
}

// NewAllocator returns an allocator over the state's current addresses.
func NewAllocator(s *cluster.State) *Allocator { return &Allocator{s: s} }

// Allocate gives a pod on node an address of the node's pool. Failures are
// the CNI plugin's message: the node's ENIs hold no
// more addresses, or its range has none left. A node without any pool (no
// podCIDR yet) still gets a unique address, so its pods run.
func (a *Allocator) Allocate(node *corev1.Node) (string, error) {
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
func (a *Allocator) poolOf(node *corev1.Node) *Pool {
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

func (a *Allocator) build() {
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
func (a *Allocator) countIn(p Pool, first netip.Addr, n uint64) uint64 {
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
func (a *Allocator) draw(first netip.Addr, n uint64) (netip.Addr, bool) {
	return aws.DrawAddress(&a.s.Rand, first, n, uint64(len(a.used)), func(ip netip.Addr) bool { return a.used[ip] })
}

func (a *Allocator) take(ip netip.Addr, node *corev1.Node) {
	a.used[ip] = true
	a.onNode[node.Name]++
}

// fallback is a unique address in 10.0.0.0/8 derived from the state's write
// counter, for a node with no range at all (node IPAM out of ranges).
func (a *Allocator) fallback(node *corev1.Node) string {
	for n := a.s.ResourceVersion; ; n++ {
		v := uint32(n & 0xffffff)
		ip := netip.AddrFrom4([4]byte{10, byte(v >> 16), byte(v >> 8), byte(v)})
		if !a.used[ip] {
			a.take(ip, node)
			return ip.String()
		}
	}
}

// exhausted is the CNI plugin's failure for this pool.
func (p Pool) exhausted() error {
	if p.EC2 {
		return errors.New(awsCNIExhausted)
	}
	start := aws.AddrAdd(p.Prefix.Addr(), 1)
	first, n := p.usable()
	end := start
	if n > 0 {
		end = aws.AddrAdd(first, n-1)
	}
	return fmt.Errorf(hostLocalExhausted, start, end)
}
