package podnet

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/cluster"
)

type nodeOpt func(*corev1.Node)

func node(name string, opts ...nodeOpt) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func ip(a string) nodeOpt {
	return func(n *corev1.Node) {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a})
	}
}
func podCIDR(c string) nodeOpt      { return func(n *corev1.Node) { n.Spec.PodCIDR = c } }
func label(k, v string) nodeOpt     { return func(n *corev1.Node) { n.Labels[k] = v } }
func instanceType(t string) nodeOpt { return label(corev1.LabelInstanceTypeStable, t) }
func providerID(id string) nodeOpt  { return func(n *corev1.Node) { n.Spec.ProviderID = id } }
func zone(z string) nodeOpt         { return label(corev1.LabelTopologyZone, z) }
func eksState() *cluster.State {
	s := cluster.New("", 1)
	s.Info = cluster.Info{Name: "c", Region: "eu-west-1"}
	return s
}
func plainState() *cluster.State       { return cluster.New("", 1) }
func mustPrefix(p string) netip.Prefix { return netip.MustParsePrefix(p) }

func TestPoolFor(t *testing.T) {
	tests := []struct {
		name  string
		s     *cluster.State
		node  *corev1.Node
		want  string // prefix, "" for none
		vpc   bool
		limit int
	}{
		{"EKS node in the cluster VPC by IP", eksState(), node("a", instanceType("m5.large"), ip("192.168.100.7")), "192.168.96.0/19", true, 27},
		{"EKS node by zone", eksState(), node("a", instanceType("m5.large"), zone("eu-west-1c")), "192.168.160.0/19", true, 27},
		{"EC2 node from another cluster: /19 around its IP", eksState(), node("a", instanceType("t3.micro"), zone("ap-south-2b"), ip("10.200.77.9")), "10.200.64.0/19", true, 2},
		{"EC2 node, no ClusterConfig: the default VPC is not adopted", plainState(), node("a", providerID("aws:///us-west-2a/i-1"), zone("us-west-2a"), ip("10.1.2.3")), "10.1.0.0/19", true, 0},
		{"EC2 IPv6 node: its /64, no ENI limit", plainState(), node("a", instanceType("m5.large"), ip("2600:1f14:aa::9")), "2600:1f14:aa::/64", true, 0},
		{"EC2 node without address: podCIDR stands in", plainState(), node("a", instanceType("t3.micro"), podCIDR("10.244.7.0/24")), "10.244.7.0/24", false, 2},
		{"EC2 node with nothing", plainState(), node("a", instanceType("t3.micro"), zone("zone-c")), "", false, 0},
		{"kind node: podCIDR first", plainState(), node("a", providerID("kind://docker/kind/kind-worker"), podCIDR("10.244.1.0/24"), ip("172.18.0.3")), "10.244.1.0/24", false, 0},
		{"kind node without podCIDR: its /24", plainState(), node("a", ip("172.18.0.3")), "172.18.0.0/24", false, 0},
		{"IPv6 InternalIP: /64", plainState(), node("a", ip("fd00:10:20::5")), "fd00:10:20::/64", false, 0},
		{"podCIDRs wins over podCIDR", plainState(), node("a", func(n *corev1.Node) { n.Spec.PodCIDR = "10.1.0.0/24"; n.Spec.PodCIDRs = []string{"10.2.0.0/24"} }), "10.2.0.0/24", false, 0},
		{"unparsable address and CIDR", plainState(), node("a", ip("not-an-ip"), podCIDR("garbage")), "", false, 0},
		{"no labels, no addresses", plainState(), node("a"), "", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := PoolFor(tt.s, tt.node)
			if tt.want == "" {
				if ok {
					t.Fatalf("pool %v, want none", p.Prefix)
				}
				if !NeedsPodCIDR(tt.s, tt.node) {
					t.Error("NeedsPodCIDR false for a node without a pool")
				}
				return
			}
			if !ok || p.Prefix != mustPrefix(tt.want) || p.VPC != tt.vpc || p.NodeLimit != tt.limit {
				t.Fatalf("pool %v vpc=%v limit=%d ok=%v, want %s vpc=%v limit=%d", p.Prefix, p.VPC, p.NodeLimit, ok, tt.want, tt.vpc, tt.limit)
			}
		})
	}
}

func TestUsable(t *testing.T) {
	tests := []struct {
		pool  Pool
		first string
		n     uint64
	}{
		{Pool{Prefix: mustPrefix("10.0.0.0/28"), VPC: true}, "10.0.0.4", 11},
		{Pool{Prefix: mustPrefix("10.0.0.0/30"), VPC: true}, "10.0.0.0", 0},
		{Pool{Prefix: mustPrefix("10.244.1.0/24")}, "10.244.1.2", 253},
		{Pool{Prefix: mustPrefix("10.250.0.0/30")}, "10.250.0.2", 1},
		{Pool{Prefix: mustPrefix("10.250.0.0/31")}, "10.250.0.0", 0},
		{Pool{Prefix: mustPrefix("10.250.0.1/32")}, "10.250.0.1", 0},
		{Pool{Prefix: mustPrefix("fd00::/120")}, "fd00::2", 254},
		{Pool{Prefix: mustPrefix("fd00::/48")}, "fd00::2", maxRangeSize - 2},
		{Pool{Prefix: mustPrefix("10.0.0.0/8")}, "10.0.0.2", 1<<24 - 3},
	}
	for _, tt := range tests {
		first, n := tt.pool.usable()
		if n != tt.n || (n > 0 && first.String() != tt.first) {
			t.Errorf("%v: first %s n %d, want %s %d", tt.pool.Prefix, first, n, tt.first, tt.n)
		}
	}
}

// The VPC path draws exactly as aws.AllocateIPFrom did, so the addresses of
// existing EKS scenarios do not move.
func TestAllocatorMatchesAWSAllocator(t *testing.T) {
	a, b := eksState(), eksState()
	n := node("ip-192-168-100-7", instanceType("m5.large"), ip("192.168.100.7"))
	a.Nodes[n.Name], b.Nodes[n.Name] = n, n
	alloc := NewAllocator(a)
	used := aws.UsedIPs(b)
	for i := 0; i < 27; i++ {
		got, err := alloc.Allocate(n)
		want, err2 := aws.AllocateIPFrom(b, "192.168.96.0/19", used)
		if err != nil || err2 != nil || got != want {
			t.Fatalf("allocation %d: %s (%v), aws allocator %s (%v)", i, got, err, want, err2)
		}
	}
	// The 28th exceeds the m5.large's 3 ENIs × 9 secondary addresses.
	if got, err := alloc.Allocate(n); err == nil || err.Error() != awsCNIExhausted {
		t.Fatalf("28th pod on an m5.large got %q, %v", got, err)
	}
}

func TestAllocatorExhaustionAndRelease(t *testing.T) {
	s := plainState()
	n := node("tiny", podCIDR("10.250.0.0/30"))
	s.Nodes[n.Name] = n
	got, err := NewAllocator(s).Allocate(n)
	if err != nil || got != "10.250.0.2" {
		t.Fatalf("first pod: %s, %v", got, err)
	}
	s.Pods["default/a"] = &corev1.Pod{Spec: corev1.PodSpec{NodeName: "tiny"}, Status: corev1.PodStatus{PodIP: got, Phase: corev1.PodRunning}}
	_, err = NewAllocator(s).Allocate(n)
	want := `plugin type="ptp" failed (add): failed to allocate for range 0: no IP addresses available in range set: 10.250.0.1-10.250.0.2`
	if err == nil || err.Error() != want {
		t.Fatalf("second pod: %v, want %s", err, want)
	}
	// A finished pod's sandbox is gone: its address is free again.
	s.Pods["default/a"].Status.Phase = corev1.PodSucceeded
	if got, err := NewAllocator(s).Allocate(n); err != nil || got != "10.250.0.2" {
		t.Fatalf("after the pod finished: %s, %v", got, err)
	}
}

func TestAllocatorIPv6AndHugeRanges(t *testing.T) {
	s := plainState()
	alloc := NewAllocator(s)
	for _, n := range []*corev1.Node{node("v6", ip("fd00:10:20::5")), node("v6cidr", podCIDR("fd00:99::/48")), node("huge", podCIDR("10.0.0.0/8"))} {
		s.Nodes[n.Name] = n
		p, _ := PoolFor(s, n)
		seen := map[string]bool{}
		for i := 0; i < 200; i++ {
			got, err := alloc.Allocate(n)
			if err != nil {
				t.Fatalf("%s: %v", n.Name, err)
			}
			a := netip.MustParseAddr(got)
			if !p.Prefix.Contains(a) || seen[got] {
				t.Fatalf("%s: %s outside %v or repeated", n.Name, got, p.Prefix)
			}
			seen[got] = true
		}
	}
}

func TestNoPoolStillGetsUniqueAddresses(t *testing.T) {
	s := plainState()
	n := node("bare")
	alloc := NewAllocator(s)
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		got, err := alloc.Allocate(n)
		if err != nil || seen[got] || !strings.HasPrefix(got, "10.") {
			t.Fatalf("allocation %d: %q, %v", i, got, err)
		}
		seen[got] = true
	}
}
