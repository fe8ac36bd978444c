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
	sorted []netip.Addr             // in use when built, for counting per pool
	inPool map[netip.Prefix]*uint64 // in use per pool: counted once, then kept up to date
	onNode map[string]*int          // pods holding an address, per node
	// nodes holds what Allocate reads of each node it was asked about in
	// this sync (nodeSlot), by node name.
	nodes map[string]*nodeSlot
}

// nodeSlot is what Allocate derives from a node once per sync instead of
// once per pod: at 100,000 pods on 5,000 nodes, the pool, its usable
// range and the two counters were five map operations per address
// (docs/simulation-speed.md, "Session 24 round 2: kubelet").
type nodeSlot struct {
	// fargate is the Fargate node's own address, when it has one: every
	// pod on it has that address and nothing else is read.
	fargate string
	// built: pool, first and n are set (after Allocator.build).
	built bool
	pool  *Pool // nil: the node has none
	first netip.Addr
	n     uint64
	// inPool counts the pool's addresses in use (countIn), shared by the
	// nodes of the same pool; nil until first counted.
	inPool *uint64
	// onNode counts the pods holding an address on the node.
	onNode *int
}

// NewAllocator returns an allocator over the state's current addresses.
func NewAllocator(s *cluster.State) *Allocator { return &Allocator{s: s} }

// Allocate gives a pod on node an address of the node's pool. Failures are
// the CNI plugin's message: the node's ENIs hold no
// more addresses, or its range has none left. A node without any pool (no
// podCIDR yet) still gets a unique address, so its pods run.
func (a *Allocator) Allocate(node *corev1.Node) (string, error) {
	slot := a.slot(node)
	if slot.fargate != "" {
		return slot.fargate, nil
	}
	a.build()
	if !slot.built {
		a.fill(slot, node)
	}
	pool := slot.pool
	if pool == nil {
		return a.fallback(slot), nil
	}
	if pool.NodeLimit > 0 && *slot.onNode >= pool.NodeLimit {
		return "", pool.exhausted()
	}
	first, n := slot.first, slot.n
	if slot.inPool == nil {
		slot.inPool = a.countIn(*pool, first, n)
	}
	if *slot.inPool >= n {
		return "", pool.exhausted()
	}
	ip, ok := a.draw(first, n)
	if !ok {
		return "", pool.exhausted()
	}
	a.take(ip, slot)
	*slot.inPool++
	return ip.String(), nil
}

// slot returns the node's slot, made at the first address asked for on it
// in this sync. A Fargate node is one pod's micro-VM: the pod has the
// node's own address (docs/fargate.md#the-node).
func (a *Allocator) slot(node *corev1.Node) *nodeSlot {
	if sl, ok := a.nodes[node.Name]; ok {
		return sl
	}
	sl := &nodeSlot{}
	if node.Labels[aws.LabelComputeType] == "fargate" {
		for _, addr := range node.Status.Addresses {
			if addr.Type == corev1.NodeInternalIP {
				sl.fargate = addr.Address
				break
			}
		}
	}
	if a.nodes == nil {
		a.nodes = map[string]*nodeSlot{}
	}
	a.nodes[node.Name] = sl
	return sl
}

// fill sets the slot's pool, range and node counter (once the addresses in
// use are collected).
func (a *Allocator) fill(sl *nodeSlot, node *corev1.Node) {
	sl.built = true
	if p, ok := PoolFor(a.s, node); ok {
		sl.pool = &p
		sl.first, sl.n = p.usable()
	}
	sl.onNode = a.counter(node.Name)
}

// counter is the node's count of pods holding an address.
func (a *Allocator) counter(name string) *int {
	c := a.onNode[name]
	if c == nil {
		c = new(int)
		a.onNode[name] = c
	}
	return c
}

func (a *Allocator) build() {
	if a.used != nil {
		return
	}
	// Made for every node and pod at once: a sync that starts 100,000 pods
	// adds as many addresses, and growing the map step by step cost a
	// quarter of Allocate. The sizes are hints; nothing reads the maps'
	// order (sorted is sorted below).
	a.used = make(map[netip.Addr]bool, len(a.s.Nodes)+len(a.s.Pods))
	a.inPool = map[netip.Prefix]*uint64{}
	a.onNode = make(map[string]*int, len(a.s.Nodes))
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
			*a.counter(p.Spec.NodeName)++
		}
	}
	a.sorted = make([]netip.Addr, 0, len(a.used))
	for ip := range a.used {
		a.sorted = append(a.sorted, ip)
	}
	sort.Slice(a.sorted, func(i, j int) bool { return a.sorted[i].Less(a.sorted[j]) })
}

// countIn is the counter of the pool's usable addresses that are taken,
// shared by the nodes of the pool. Pools of different nodes may overlap,
// so it is a hint: draw has the last word.
func (a *Allocator) countIn(p Pool, first netip.Addr, n uint64) *uint64 {
	if c, ok := a.inPool[p.Prefix]; ok {
		return c
	}
	c := new(uint64)
	if n > 0 {
		last := aws.AddrAdd(first, n-1)
		lo := sort.Search(len(a.sorted), func(i int) bool { return !a.sorted[i].Less(first) })
		hi := sort.Search(len(a.sorted), func(i int) bool { return last.Less(a.sorted[i]) })
		if hi > lo {
			*c = uint64(hi - lo)
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

func (a *Allocator) take(ip netip.Addr, slot *nodeSlot) {
	a.used[ip] = true
	*slot.onNode++
}

// fallback is a unique address in 10.0.0.0/8 derived from the state's write
// counter, for a node with no range at all (node IPAM out of ranges).
func (a *Allocator) fallback(slot *nodeSlot) string {
	for n := a.s.ResourceVersion; ; n++ {
		v := uint32(n & 0xffffff)
		ip := netip.AddrFrom4([4]byte{10, byte(v >> 16), byte(v >> 8), byte(v)})
		if !a.used[ip] {
			a.take(ip, slot)
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
