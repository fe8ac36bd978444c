package nodeipam

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestRangesInInsertionOrder(t *testing.T) {
	s := cluster.New("", 1)
	add := func(n *corev1.Node) {
		s.Nodes[n.Name] = n
		s.Scheduler.NodeOrder = append(s.Scheduler.NodeOrder, n.Name)
	}
	add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "z-first"}})
	add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "has-range"}, Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24"}})
	add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "has-ip"}, Status: corev1.NodeStatus{
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.18.0.4"}}}})
	add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a-third"}})
	s.Nodes["unordered"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "unordered"}}

	changed, err := New().Sync(s)
	if err != nil || !changed {
		t.Fatalf("changed %v, %v", changed, err)
	}
	want := map[string]string{"z-first": "10.244.0.0/24", "has-range": "10.244.1.0/24", "has-ip": "", "a-third": "10.244.2.0/24", "unordered": "10.244.3.0/24"}
	for name, cidr := range want {
		n := s.Nodes[name]
		if n.Spec.PodCIDR != cidr || (cidr != "" && name != "has-range" && (len(n.Spec.PodCIDRs) != 1 || n.Spec.PodCIDRs[0] != cidr)) {
			t.Errorf("%s: %q %v, want %s", name, n.Spec.PodCIDR, n.Spec.PodCIDRs, cidr)
		}
	}
	if changed, _ := New().Sync(s); changed {
		t.Error("second sync changed something")
	}
}

func TestRangeArithmetic(t *testing.T) {
	for _, i := range []int{0, 255, 256, rangeCount - 1} {
		p := rangeAt(i)
		if j, ok := rangeIndex(p); !ok || j != i {
			t.Errorf("range %d = %v maps back to %d, %v", i, p, j, ok)
		}
	}
	if got := rangeAt(rangeCount - 1).String(); got != "10.255.255.0/24" {
		t.Errorf("last range %s", got)
	}
}
