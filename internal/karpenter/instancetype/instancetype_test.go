package instancetype

import (
	"encoding/csv"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/internal/aws"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// TestAllocatableOracle checks Allocatable() of every type against the
// AL2023 values on Karpenter's docs page (internal/aws's generated oracle).
func TestAllocatableOracle(t *testing.T) {
	f, err := os.Open("../../aws/testdata/karpenter-al2023-allocatable.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	columns := map[string]corev1.ResourceName{
		"cpu": "cpu", "memory": "memory", "ephemeral_storage": "ephemeral-storage", "pods": "pods",
		"nvidia_gpu": aws.ResourceNVIDIAGPU, "pod_eni": aws.ResourcePodENI, "efa": aws.ResourceEFA,
	}
	its := listDefault(t)
	if len(recs)-1 != len(its) {
		t.Fatalf("oracle has %d rows, list %d", len(recs)-1, len(its))
	}
	for _, rec := range recs[1:] {
		it := byName(t, its, rec[0])
		got := it.Allocatable()
		for j, col := range recs[0][1:] {
			want, name := rec[j+1], columns[col]
			q, ok := got[name]
			if want == "" {
				if ok && !q.IsZero() {
					t.Errorf("%s: %s = %s, want none", it.Name, name, q.String())
				}
				continue
			}
			if !ok || q.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s: %s = %s, want %s", it.Name, name, q.String(), want)
			}
		}
	}
}

func TestNodeClassOptionsReachCapacity(t *testing.T) {
	nc := NodeClassOptions{
		AMIFamily: AMIFamilyBottlerocket, MaxPods: 20, RootVolumeSize: resource.MustParse("100Gi"),
		SystemReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		EvictionHard:   map[string]string{"memory.available": "200Mi"},
	}
	it := byName(t, List("us-west-2", ZonesOf("us-west-2a"), nc, nil, nil, t0), "m5.large")
	want := map[corev1.ResourceName]string{
		// Bottlerocket sizes kube-reserved memory from maxPods: 11*20+255 = 475.
		"pods": "20", "cpu": "1830m", "memory": "6902Mi", "ephemeral-storage": "89Gi",
	}
	alloc := it.Allocatable()
	for name, w := range want {
		if q := alloc[name]; q.Cmp(resource.MustParse(w)) != 0 {
			t.Errorf("allocatable %s = %s, want %s", name, q.String(), w)
		}
	}
	if q := it.Overhead.SystemReserved[corev1.ResourceCPU]; q.String() != "100m" {
		t.Errorf("system-reserved cpu = %s", q.String())
	}
}

func TestOfferingsPerRegion(t *testing.T) {
	tests := []struct {
		region         string
		priced, offers int
	}{
		// Priced types per region from the catalog (shared/data README), 3 zones x 2 capacity types.
		{"us-east-1", 1307, 1307 * 6},
		{"us-west-2", 844, 844 * 6},
		{"eu-west-1", 755, 755 * 6},
		{"ap-south-1", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.region, func(t *testing.T) {
			its := List(tt.region, ZonesOf(aws.DefaultZones(tt.region)...), NodeClassOptions{}, nil, nil, t0)
			priced, offers := 0, 0
			for _, it := range its {
				if len(it.Offerings) > 0 {
					priced++
				}
				offers += len(it.Offerings)
			}
			if len(its) != 1325 || priced != tt.priced || offers != tt.offers {
				t.Errorf("%d types, %d priced, %d offerings; want 1325, %d, %d", len(its), priced, offers, tt.priced, tt.offers)
			}
		})
	}
}

func TestOfferings(t *testing.T) {
	uo := NewUnavailableOfferings()
	uo.MarkUnavailable("m5.large", "us-west-2b", scheduling.CapacityTypeSpot, t0)
	its := List("us-west-2", ZonesOf("us-west-2a", "us-west-2b", "us-west-2c"),
		NodeClassOptions{SubnetZones: ZonesOf("us-west-2a", "us-west-2b")}, nil, uo, t0.Add(time.Minute))
	m5 := byName(t, its, "m5.large")
	var got []string
	for _, o := range m5.Offerings {
		s := o.Zone() + "/" + o.CapacityType()
		if !o.Available {
			s += "(unavailable)"
		}
		got = append(got, s)
	}
	want := "us-west-2a/on-demand us-west-2a/spot us-west-2b/on-demand us-west-2b/spot(unavailable) us-west-2c/on-demand(unavailable) us-west-2c/spot(unavailable)"
	if strings.Join(got, " ") != want {
		t.Errorf("offerings\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	od := m5.Offerings[0]
	if od.Price != 0.096 || m5.Offerings[1].Price != 0.096*DefaultSpotFraction {
		t.Errorf("prices %v %v, want 0.096 and 0.7x", od.Price, m5.Offerings[1].Price)
	}
	if s := od.Requirements.String(); !strings.Contains(s, "topology.k8s.aws/zone-id In [usw2-az1]") || !strings.Contains(s, "karpenter.sh/capacity-type In [on-demand]") {
		t.Errorf("offering requirements %s", s)
	}
	// Outside the subnets there is no zone-id, as upstream.
	if m5.Offerings[4].Requirements.Has(scheduling.LabelTopologyZoneID) {
		t.Errorf("us-west-2c offering has a zone-id")
	}
	if c := m5.Offerings.Available().Cheapest(); c.Zone() != "us-west-2a" || c.CapacityType() != "spot" {
		t.Errorf("cheapest available %s/%s", c.Zone(), c.CapacityType())
	}
	if e := m5.Offerings.MostExpensive(); e.CapacityType() != "on-demand" || e.Zone() != "us-west-2a" {
		t.Errorf("most expensive %s/%s", e.Zone(), e.CapacityType())
	}
	if p := m5.Offerings.WorstLaunchPrice(scheduling.NewRequirements()); p != 0.096*DefaultSpotFraction {
		t.Errorf("worst launch price %v, want the spot price", p)
	}
	if (Offerings{}).Cheapest() != nil {
		t.Error("Cheapest of none is not nil")
	}
}

func TestUnavailableOfferingsVirtualTime(t *testing.T) {
	uo := NewUnavailableOfferings()
	uo.MarkUnavailable("m5.large", "us-west-2a", "spot", t0)
	tests := []struct {
		at   time.Duration
		want bool
	}{{0, true}, {UnavailableOfferingsTTL - time.Nanosecond, true}, {UnavailableOfferingsTTL, true}, {UnavailableOfferingsTTL + time.Nanosecond, false}}
	for _, tt := range tests {
		if got := uo.IsUnavailable("m5.large", "us-west-2a", "spot", t0.Add(tt.at)); got != tt.want {
			t.Errorf("at +%v unavailable = %v, want %v", tt.at, got, tt.want)
		}
	}
	if uo.IsUnavailable("m5.large", "us-west-2a", "on-demand", t0) || uo.IsUnavailable("m5.large", "us-west-2b", "spot", t0) {
		t.Error("mark leaked to another offering")
	}
	// Marking again extends the TTL from the new mark.
	uo.MarkUnavailable("m5.large", "us-west-2a", "spot", t0.Add(2*time.Minute))
	if !uo.IsUnavailable("m5.large", "us-west-2a", "spot", t0.Add(4*time.Minute)) {
		t.Error("re-mark did not extend")
	}
	uo.MarkCapacityTypeUnavailable("on-demand", t0)
	uo.MarkAZUnavailable("us-west-2c", t0)
	if !uo.IsUnavailable("c5.large", "us-west-2b", "on-demand", t0) || !uo.IsUnavailable("c5.large", "us-west-2c", "spot", t0) {
		t.Error("capacity-type or zone mark ignored")
	}
	seq := uo.SeqNum
	uo.Expire(t0.Add(4 * time.Minute))
	if uo.SeqNum != seq+2 || uo.IsUnavailable("c5.large", "us-west-2c", "spot", t0) {
		t.Errorf("Expire: seq %d -> %d", seq, uo.SeqNum)
	}
	uo.Delete("m5.large", "us-west-2a", "spot")
	if uo.IsUnavailable("m5.large", "us-west-2a", "spot", t0.Add(4*time.Minute)) {
		t.Error("Delete kept the mark")
	}
	var none *UnavailableOfferings
	if none.IsUnavailable("m5.large", "us-west-2a", "spot", t0) {
		t.Error("nil cache marks")
	}
}

const spotJSON = `{"SpotPriceHistory": [
 {"AvailabilityZone": "us-west-2a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.040000", "Timestamp": "2026-01-01T10:00:00+00:00"},
 {"AvailabilityZone": "us-west-2a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.035000", "Timestamp": "2026-01-01T12:00:00+00:00"},
 {"AvailabilityZone": "us-west-2a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.050000", "Timestamp": "2026-01-01T11:00:00Z"},
 {"AvailabilityZone": "us-west-2b", "InstanceType": "m5.large", "ProductDescription": "Windows", "SpotPrice": "0.090000", "Timestamp": "2026-01-01T12:00:00Z"},
 {"AvailabilityZone": "us-west-2c", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX (Amazon VPC)", "SpotPrice": "0.031000", "Timestamp": "2026-01-01T12:00:00Z"}
]}`

func TestSpotPriceHistory(t *testing.T) {
	p, err := ParseSpotPriceHistory(strings.NewReader(spotJSON))
	if err != nil {
		t.Fatal(err)
	}
	m5, _ := aws.Lookup("m5.large")
	tests := []struct {
		zone string
		want float64
	}{
		{"us-west-2a", 0.035},                       // latest timestamp wins
		{"us-west-2b", 0.096 * DefaultSpotFraction}, // Windows ignored: default
		{"us-west-2c", 0.031},
	}
	for _, tt := range tests {
		if got, ok := p.SpotPrice(m5, "us-west-2", tt.zone); !ok || got != tt.want {
			t.Errorf("%s: %v,%v want %v", tt.zone, got, ok, tt.want)
		}
	}
	p.SpotFraction = 0.5
	if got, _ := p.SpotPrice(m5, "us-west-2", "us-west-2b"); got != 0.048 {
		t.Errorf("fraction 0.5: %v", got)
	}
	if _, ok := p.SpotPrice(m5, "ap-south-1", "ap-south-1a"); ok {
		t.Error("priced without an on-demand price or observation")
	}
	its := List("us-west-2", ZonesOf("us-west-2a"), NodeClassOptions{}, p, nil, t0)
	if o := byName(t, its, "m5.large").Offerings[1]; o.CapacityType() != "spot" || o.Price != 0.035 {
		t.Errorf("spot offering price %v", o.Price)
	}
	for _, bad := range []string{`{`, `{"SpotPriceHistory":[{"AvailabilityZone":"us-west-2a","InstanceType":"m5.large","ProductDescription":"Linux/UNIX","SpotPrice":"x"}]}`,
		`{"SpotPriceHistory":[{"InstanceType":"m5.large","ProductDescription":"Linux/UNIX","SpotPrice":"0.1"}]}`} {
		if _, err := ParseSpotPriceHistory(strings.NewReader(bad)); err == nil {
			t.Errorf("no error for %s", bad)
		}
	}
}
