package aws

import (
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestVPCSubnets(t *testing.T) {
	tests := []struct {
		name    string
		cidr    string
		zones   []string
		want    []string // public then private
		wantErr bool
	}{
		{
			name: "eksctl default", zones: []string{"a", "b", "c"},
			want: []string{"192.168.0.0/19", "192.168.32.0/19", "192.168.64.0/19", "192.168.96.0/19", "192.168.128.0/19", "192.168.160.0/19"},
		},
		{
			name: "workshop vpc", cidr: "10.42.0.0/16", zones: []string{"a", "b", "c"},
			want: []string{"10.42.0.0/19", "10.42.32.0/19", "10.42.64.0/19", "10.42.96.0/19", "10.42.128.0/19", "10.42.160.0/19"},
		},
		{
			name: "two zones", cidr: "10.0.0.0/16", zones: []string{"a", "b"},
			want: []string{"10.0.0.0/19", "10.0.32.0/19", "10.0.64.0/19", "10.0.96.0/19"},
		},
		{
			name: "five zones split in 16", cidr: "10.0.0.0/16", zones: []string{"a", "b", "c", "d", "e"},
			want: []string{"10.0.0.0/20", "10.0.16.0/20", "10.0.32.0/20", "10.0.48.0/20", "10.0.64.0/20",
				"10.0.80.0/20", "10.0.96.0/20", "10.0.112.0/20", "10.0.128.0/20", "10.0.144.0/20"},
		},
		{name: "not a cidr", cidr: "10.0.0.0", zones: []string{"a"}, wantErr: true},
		{name: "ipv6", cidr: "fd00::/48", zones: []string{"a"}, wantErr: true},
		{name: "too small", cidr: "10.0.0.0/27", zones: []string{"a"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subnets, err := VPCSubnets(tt.cidr, tt.zones)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			var got []string
			for i, sn := range subnets {
				got = append(got, sn.CIDR)
				if wantPrivate := i >= len(tt.zones); sn.Private != wantPrivate || sn.Zone != tt.zones[i%len(tt.zones)] {
					t.Errorf("subnet %d: %+v", i, sn)
				}
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPrivateSubnet(t *testing.T) {
	info := cluster.Info{Region: "us-west-2"}
	got, err := PrivateSubnet(info, "us-west-2b")
	if err != nil || got != "192.168.128.0/19" {
		t.Errorf("PrivateSubnet = %q, %v", got, err)
	}
	if _, err := PrivateSubnet(info, "us-west-2d"); err == nil {
		t.Error("zone outside the cluster gave no error")
	}
}

func TestNodeName(t *testing.T) {
	tests := []struct{ region, ip, want string }{
		{"us-west-2", "10.42.10.138", "ip-10-42-10-138.us-west-2.compute.internal"},
		{"us-east-1", "192.168.22.49", "ip-192-168-22-49.ec2.internal"},
		{"eu-west-1", "192.168.100.4", "ip-192-168-100-4.eu-west-1.compute.internal"},
	}
	for _, tt := range tests {
		if got := NodeName(tt.region, tt.ip); got != tt.want {
			t.Errorf("NodeName(%s, %s) = %s, want %s", tt.region, tt.ip, got, tt.want)
		}
	}
}

func TestAllocateIP(t *testing.T) {
	const cidr = "10.0.0.0/28" // 16 addresses, 11 assignable (.4 to .14)
	s := cluster.New("", 7)
	used := map[string]bool{}
	prefix := netip.MustParsePrefix(cidr)
	for i := 0; i < 11; i++ {
		ip, err := AllocateIPFrom(s, cidr, used)
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		a := netip.MustParseAddr(ip)
		last := a.As4()[3]
		if !prefix.Contains(a) || last < 4 || last > 14 {
			t.Errorf("allocated %s outside the assignable range", ip)
		}
	}
	if len(used) != 11 {
		t.Errorf("%d distinct addresses, want 11", len(used))
	}
	if ip, err := AllocateIPFrom(s, cidr, used); err == nil {
		t.Errorf("full subnet allocated %s", ip)
	}
	if _, err := AllocateIPFrom(s, "10.0.0.0/30", map[string]bool{}); err == nil {
		t.Error("/30 has no assignable address but allocation succeeded")
	}
}

func TestAllocateIPAvoidsStateAndIsDeterministic(t *testing.T) {
	build := func() *cluster.State {
		s := cluster.New("", 42)
		s.Nodes["n"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.4"}}}}
		s.Pods["default/p"] = &corev1.Pod{Status: corev1.PodStatus{PodIP: "10.0.0.5", PodIPs: []corev1.PodIP{{IP: "10.0.0.5"}}}}
		return s
	}
	a, b := build(), build()
	for i := 0; i < 6; i++ {
		x, err1 := AllocateIP(a, "10.0.0.0/29") // assignable: .4, .5, .6
		y, err2 := AllocateIP(b, "10.0.0.0/29")
		if x != y || (err1 == nil) != (err2 == nil) {
			t.Fatalf("same seed gave %s/%v and %s/%v", x, err1, y, err2)
		}
		if err1 == nil && x != "10.0.0.6" {
			t.Errorf("allocated %s, want the only free address 10.0.0.6", x)
		}
	}
}

func TestClusterSubnetForNode(t *testing.T) {
	s := cluster.New("", 1)
	s.Info = cluster.Info{Name: "c", Region: "us-west-2", VPCCIDR: "10.42.0.0/16"}
	byIP := &corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.42.150.3"}}}}
	byZone := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelTopologyZone: "us-west-2c"}}}
	neither := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	otherZone := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelTopologyZone: "zone-c"}}}
	if got, ok := ClusterSubnetForNode(s, byIP); !ok || got != "10.42.128.0/19" {
		t.Errorf("by IP: %q, %v", got, ok)
	}
	if got, ok := ClusterSubnetForNode(s, byZone); !ok || got != "10.42.160.0/19" {
		t.Errorf("by zone: %q, %v", got, ok)
	}
	for _, n := range []*corev1.Node{neither, otherZone} {
		if got, ok := ClusterSubnetForNode(s, n); ok {
			t.Errorf("node %v outside the VPC got subnet %s", n.Labels, got)
		}
	}
	// Without a ClusterConfig there is no VPC: not even the default one.
	s.Info = cluster.Info{}
	if got, ok := ClusterSubnetForNode(s, byZone); ok {
		t.Errorf("state without a ClusterConfig gave subnet %s", got)
	}
}
