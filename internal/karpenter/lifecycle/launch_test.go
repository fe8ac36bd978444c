package lifecycle

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-sim/berth/internal/karpenter/instancetype"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

var testZones = instancetype.ZonesOf("us-west-2a", "us-west-2b", "us-west-2c")

func listTypes(t *testing.T, pricing *instancetype.Pricing, unavailable *instancetype.UnavailableOfferings, names ...string) instancetype.InstanceTypes {
	t.Helper()
	all := instancetype.List("us-west-2", testZones, instancetype.NodeClassOptions{}, pricing, unavailable, time.Unix(0, 0))
	var out instancetype.InstanceTypes
	for _, name := range names {
		found := false
		for _, it := range all {
			if it.Name == name {
				out, found = append(out, it), true
			}
		}
		if !found {
			t.Fatalf("no instance type %s", name)
		}
	}
	return out
}

func reqs(capacityTypes ...string) scheduling.Requirements {
	return scheduling.NewRequirements(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityTypes...))
}

func names(its instancetype.InstanceTypes) string {
	var out []string
	for _, it := range its {
		out = append(out, it.Name)
	}
	return strings.Join(out, ",")
}

func TestSelectInstance(t *testing.T) {
	od, spot := scheduling.CapacityTypeOnDemand, scheduling.CapacityTypeSpot
	minValues := func(r scheduling.Requirements) scheduling.Requirements {
		one := 1
		r.Add(scheduling.NewRequirementWithFlexibility(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpExists, &one))
		return r
	}
	for _, tc := range []struct {
		name     string
		types    []string
		reqs     scheduling.Requirements
		requests corev1.ResourceList
		want     string // type/capacity-type, or "ICE"
	}{
		{"on-demand: cheapest type", []string{"m5.xlarge", "m5.large", "c5.large"}, reqs(od), nil, "c5.large/on-demand"},
		{"spot preferred when allowed", []string{"m5.large", "c5.large"}, reqs(od, spot), nil, "c5.large/spot"},
		{"requests rule out small types", []string{"c5.large", "m5.large", "c5.xlarge"}, reqs(od),
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}, "c5.xlarge/on-demand"},
		{"nothing fits: insufficient capacity", []string{"c5.large"}, reqs(od),
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}, "ICE"},
		// g4dn.xlarge (GPU, $0.526/h) is cheaper than m5.4xlarge ($0.768/h), but exotic.
		{"exotic types dropped", []string{"g4dn.xlarge", "m5.4xlarge"}, reqs(od), nil, "m5.4xlarge/on-demand"},
		{"exotic types kept when nothing else", []string{"g4dn.xlarge", "m5.metal"}, reqs(od), nil, "g4dn.xlarge/on-demand"},
		{"exotic filter skipped with minValues", []string{"g4dn.xlarge", "m5.4xlarge"}, minValues(reqs(od)), nil, "g4dn.xlarge/on-demand"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := SelectInstance(listTypes(t, nil, nil, tc.types...), tc.reqs, tc.requests)
			got := "ICE"
			if err == nil {
				got = l.InstanceType.Name + "/" + l.CapacityType
			} else if err != errAllUnavailable {
				t.Fatalf("unexpected error %v", err)
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSelectInstanceUnavailableOfferings(t *testing.T) {
	u := instancetype.NewUnavailableOfferings()
	for _, z := range testZones {
		u.MarkUnavailable("c5.large", z.Name, scheduling.CapacityTypeSpot, time.Unix(0, 0))
	}
	u.MarkUnavailable("m5.large", "us-west-2a", scheduling.CapacityTypeSpot, time.Unix(0, 0))
	l, err := SelectInstance(listTypes(t, nil, u, "c5.large", "m5.large"), reqs(scheduling.CapacityTypeOnDemand, scheduling.CapacityTypeSpot), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.InstanceType.Name + "/" + l.CapacityType + "/" + l.Offering.Zone(); got != "m5.large/spot/us-west-2b" {
		t.Errorf("got %s", got)
	}
	// With every spot offering gone, on-demand.
	for _, z := range testZones {
		u.MarkUnavailable("m5.large", z.Name, scheduling.CapacityTypeSpot, time.Unix(0, 0))
	}
	l, err = SelectInstance(listTypes(t, nil, u, "c5.large", "m5.large"), reqs(scheduling.CapacityTypeOnDemand, scheduling.CapacityTypeSpot), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.InstanceType.Name + "/" + l.CapacityType; got != "c5.large/on-demand" {
		t.Errorf("got %s", got)
	}
}

func TestSpotFilter(t *testing.T) {
	// c5.large on-demand is 0.085: m5.large's spot price above it takes
	// m5.large off the launch list; c5.large's spot below it keeps c5.large.
	pricing, err := instancetype.ParseSpotPriceHistory(strings.NewReader(`{"SpotPriceHistory": [
		{"AvailabilityZone": "us-west-2a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.09"},
		{"AvailabilityZone": "us-west-2b", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.09"},
		{"AvailabilityZone": "us-west-2c", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.09"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	its := listTypes(t, pricing, nil, "c5.large", "m5.large")
	if got := names(spotFilter(its, reqs(scheduling.CapacityTypeOnDemand, scheduling.CapacityTypeSpot))); got != "c5.large" {
		t.Errorf("spot and on-demand: kept %s", got)
	}
	if got := names(spotFilter(its, reqs(scheduling.CapacityTypeSpot))); got != "c5.large,m5.large" {
		t.Errorf("spot only: kept %s", got)
	}
}
