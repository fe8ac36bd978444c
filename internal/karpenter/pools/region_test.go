package pools

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func TestRegionAndZones(t *testing.T) {
	node := func(name, zone string, ec2 bool) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}}}
		if ec2 {
			n.Spec.ProviderID = "aws:///" + zone + "/i-0123"
		}
		return n
	}
	// Nodes exported from an EC2 cluster in eu-west-1, no ClusterConfig.
	s := cluster.New("1.34", 1)
	s.Nodes = map[string]*corev1.Node{"a": node("a", "eu-west-1b", true), "b": node("b", "eu-west-1a", true), "c": node("c", "zone-x", false)}
	if got := Region(s); got != "eu-west-1" {
		t.Fatalf("region %q", got)
	}
	if got := Zones(s); !reflect.DeepEqual(got, []string{"eu-west-1a", "eu-west-1b"}) {
		t.Fatalf("zones %v", got)
	}
	// Nodes from kind: no AWS region, so Karpenter launches nothing.
	k := cluster.New("1.34", 1)
	k.Nodes = map[string]*corev1.Node{"kind-worker": node("kind-worker", "", false)}
	if got := Region(k); got != "" {
		t.Fatalf("kind region %q", got)
	}
	// A ClusterConfig wins.
	s.Info.Region, s.Info.Zones = "us-east-1", []string{"us-east-1a"}
	if Region(s) != "us-east-1" || !reflect.DeepEqual(Zones(s), []string{"us-east-1a"}) {
		t.Fatalf("config region %q zones %v", Region(s), Zones(s))
	}
}
