package cost

import (
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/cluster"
)

func node(name string, created time.Duration, labels map[string]string, providerID, cpu, mem string) *corev1.Node {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, CreationTimestamp: metav1.NewTime(cluster.Epoch.Add(created))},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
		Status:     corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy()},
	}
}

func ec2(typ, zone string, extra ...string) map[string]string {
	l := map[string]string{corev1.LabelInstanceTypeStable: typ, corev1.LabelTopologyZone: zone}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestNodePrice(t *testing.T) {
	observed := &cluster.KarpenterAWS{SpotPrices: []cluster.SpotPrice{{InstanceType: "t4g.2xlarge", Zone: "eu-west-1b", Price: 0.1021}}}
	for _, tc := range []struct {
		name     string
		aws      *cluster.KarpenterAWS
		node     *corev1.Node
		known    bool
		perHour  float64
		capacity string
	}{
		{"on-demand from the catalog", nil, node("a", 0, ec2("m5.large", "us-west-2a"), "aws:///us-west-2a/i-1", "2", "8Gi"), true, 0.096, OnDemand},
		{"Karpenter spot at 0.7 x on-demand", nil,
			node("b", 0, ec2("t4g.2xlarge", "eu-west-1b", "karpenter.sh/capacity-type", "spot"), "aws:///eu-west-1b/i-2", "8", "32Gi"), true, 0.2944 * 0.7, Spot},
		{"Karpenter spot from describe-spot-price-history", observed,
			node("c", 0, ec2("t4g.2xlarge", "eu-west-1b", "karpenter.sh/capacity-type", "spot"), "aws:///eu-west-1b/i-3", "8", "32Gi"), true, 0.1021, Spot},
		{"managed node group SPOT", nil,
			node("d", 0, ec2("m5.large", "us-east-1a", "eks.amazonaws.com/capacityType", "SPOT"), "aws:///us-east-1a/i-4", "2", "8Gi"), true, 0.096 * 0.7, Spot},
		{"Fargate 0.25 vCPU 1 GB in us-west-2", nil,
			node("e", 0, map[string]string{"eks.amazonaws.com/compute-type": "fargate", corev1.LabelTopologyRegion: "us-west-2"}, "aws:///us-west-2b/x/e", "250m", "1Gi"), true, 0.014565, Fargate},
		{"kind node", nil, node("kind-worker", 0, map[string]string{corev1.LabelTopologyZone: "zone-a"}, "kind://docker/kind/kind-worker", "8", "16Gi"), false, 0, ""},
		{"type outside the catalog", nil, node("f", 0, ec2("x9.huge", "us-west-2a"), "aws:///us-west-2a/i-5", "2", "8Gi"), false, 0, ""},
		{"region without prices", nil, node("g", 0, ec2("m5.large", "ap-south-1a"), "aws:///ap-south-1a/i-6", "2", "8Gi"), false, 0, OnDemand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := cluster.New("", 1)
			s.Karpenter.AWS = tc.aws
			got := NewPricer(s).NodePrice(tc.node)
			if got.Known != tc.known || !near(got.PerHour, tc.perHour) || got.CapacityType != tc.capacity {
				t.Errorf("got %+v, want known=%v %.6f %q", got, tc.known, tc.perHour, tc.capacity)
			}
			if got.Source == "" {
				t.Errorf("no source or reason")
			}
		})
	}
}

func pod(ns, name, nodeName, cpu, mem string, created time.Duration) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(cluster.Epoch.Add(created))},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}},
	}
}

func TestShare(t *testing.T) {
	n := node("a", 0, ec2("m5.large", "us-west-2a"), "", "2", "8Gi")
	for _, tc := range []struct {
		cpu, mem string
		want     float64
	}{
		{"1", "4Gi", 0.5},
		{"2", "0", 0.5},  // all the CPU, no memory: the mean
		{"0", "0", 0},    // BestEffort pays nothing
		{"4", "16Gi", 1}, // never more than the node
		{"500m", "6Gi", (0.25 + 0.75) / 2},
	} {
		if got := Share(pod("ns", "p", "a", tc.cpu, tc.mem, 0), n); !near(got, tc.want) {
			t.Errorf("%s/%s: share %v, want %v", tc.cpu, tc.mem, got, tc.want)
		}
	}
	f := node("f", 0, map[string]string{"eks.amazonaws.com/compute-type": "fargate"}, "", "250m", "1Gi")
	if got := Share(pod("ns", "p", "f", "100m", "100Mi", 0), f); got != 1 {
		t.Errorf("Fargate share %v, want 1: the micro-VM is the pod's", got)
	}
}

// A node deleted half-way through a day still costs its 12 hours, and an
// old state without a ledger counts its live nodes from their creation.
func TestBuildOverVirtualTime(t *testing.T) {
	s := cluster.New("", 1)
	labels := ec2("m5.large", "us-west-2a", "eks.amazonaws.com/nodegroup", "default")
	s.Nodes["a"] = node("a", 0, labels, "aws:///us-west-2a/i-1", "2", "8Gi")
	s.Nodes["b"] = node("b", 0, labels, "aws:///us-west-2a/i-2", "2", "8Gi")
	s.Nodes["kind"] = node("kind", 0, nil, "kind://docker/kind/kind", "2", "8Gi")
	s.Pods["ns/p"] = pod("ns", "p", "a", "1", "4Gi", 0)
	s.Now = cluster.Epoch.Add(12 * time.Hour)
	s.DeleteNode("b")
	s.Now = cluster.Epoch.Add(24 * time.Hour)

	r, err := Build(s, Options{By: ByNode, Window: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 3 || r.Rows[1].Name != "b" || r.Rows[1].Until == nil || !near(r.Rows[1].Hours, 12) || !near(r.Rows[1].Cost, 12*0.096) {
		t.Fatalf("rows %+v: want b deleted after 12 h", r.Rows)
	}
	if !near(r.Total.Cost, 36*0.096) || !near(r.Total.PerHour, 0.096) || r.Total.Unknown != 1 || len(r.Unpriced) != 1 {
		t.Errorf("total %+v unpriced %v: want 36 node-hours of m5.large, 0.096/h now, kind unknown", r.Total, r.Unpriced)
	}

	r, _ = Build(s, Options{By: ByNamespace, Window: true, Since: 6 * time.Hour})
	want := map[string][2]float64{ // per hour, window cost
		"ns":       {0.048, 0.048 * 6},
		IdleRow:    {0.048, 0.048 * 6},
		DeletedRow: {0, 0},
	}
	for _, row := range r.Rows {
		w, ok := want[row.Name]
		if !ok || !near(row.PerHour, w[0]) || !near(row.Cost, w[1]) {
			t.Errorf("row %+v: want %v", row, w)
		}
	}
	// The kind node's idle is unknown, not zero.
	if idle := r.Rows[1]; idle.Name != IdleRow || idle.Unknown != 1 {
		t.Errorf("idle row %+v: want one unpriced node", idle)
	}

	// Without the ledger (an old state) the deleted node is simply absent.
	s.NodeLedger = nil
	r, _ = Build(s, Options{By: ByNodeGroup, Window: true})
	if len(r.Rows) != 2 || r.Rows[1].Name != "nodegroup/default" || !near(r.Rows[1].Hours, 24) {
		t.Errorf("rows %+v: want nodegroup/default with 24 node-hours", r.Rows)
	}
}

func TestOverlapHours(t *testing.T) {
	at := func(h float64) time.Time { return cluster.Epoch.Add(time.Duration(h * float64(time.Hour))) }
	for _, tc := range []struct{ from, to, ws, we, want float64 }{
		{0, 24, 0, 24, 24},
		{0, 12, 6, 24, 6},
		{13, 24, 0, 12, 0},
		{5, 10, 0, 24, 5},
	} {
		if got := overlapHours(at(tc.from), at(tc.to), at(tc.ws), at(tc.we)); !near(got, tc.want) {
			t.Errorf("%v: got %v", tc, got)
		}
	}
}

func TestBuildRejects(t *testing.T) {
	s := cluster.New("", 1)
	if _, err := Build(s, Options{By: "zone"}); err == nil {
		t.Error("--by zone accepted")
	}
}
