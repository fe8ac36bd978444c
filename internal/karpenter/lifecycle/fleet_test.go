package lifecycle

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

func TestOverridesOrder(t *testing.T) {
	overrides, err := Overrides(listTypes(t, nil, nil, "c5.large", "m5.large"), reqs(scheduling.CapacityTypeOnDemand), nil)
	if err != nil {
		t.Fatal(err)
	}
	// c5.large on-demand (0.085) is cheaper than m5.large (0.096) in every
	// zone; equal prices keep the zones' order.
	want := []string{"c5.large/us-west-2a", "c5.large/us-west-2b", "c5.large/us-west-2c",
		"m5.large/us-west-2a", "m5.large/us-west-2b", "m5.large/us-west-2c"}
	if len(overrides) != len(want) {
		t.Fatalf("got %d overrides, want %d", len(overrides), len(want))
	}
	for i, o := range overrides {
		if got := o.InstanceType.Name + "/" + o.Offering.Zone(); got != want[i] || o.CapacityType != scheduling.CapacityTypeOnDemand {
			t.Errorf("override %d = %s %s, want %s on-demand", i, got, o.CapacityType, want[i])
		}
	}
}

func TestNoCapacity(t *testing.T) {
	s := cluster.New("", 1)
	if NoCapacity(s, "m5.large", "us-west-2a", "spot") {
		t.Fatal("no outage declared, yet no capacity")
	}
	s.Karpenter.AWSState().NoCapacity = []cluster.NoCapacity{
		{InstanceType: "m5.large", Zone: "us-west-2a", CapacityType: "spot"},
		{InstanceType: "c5.large", Zone: "us-west-2a", CapacityType: "spot", Until: s.Now.Add(time.Minute)},
	}
	for _, tc := range []struct {
		it, zone, ct string
		after        int64 // seconds
		want         bool
	}{
		{"m5.large", "us-west-2a", "spot", 0, true},
		{"m5.large", "us-west-2a", "on-demand", 0, false},
		{"m5.large", "us-west-2b", "spot", 0, false},
		{"c5.large", "us-west-2a", "spot", 59, true},
		{"c5.large", "us-west-2a", "spot", 60, false}, // Until is exclusive
		{"m5.large", "us-west-2a", "spot", 3600, true},
	} {
		st := s.Clone()
		st.Now = st.Now.Add(time.Duration(tc.after) * time.Second)
		if got := NoCapacity(st, tc.it, tc.zone, tc.ct); got != tc.want {
			t.Errorf("%s %s %s at +%ds: got %v, want %v", tc.it, tc.zone, tc.ct, tc.after, got, tc.want)
		}
	}
}

func TestFleetErrorText(t *testing.T) {
	err := &insufficientCapacityError{fleetErrors: []string{fleetErrorText("m5.large", "us-west-2a", "on-demand"), fleetErrorText("m5.large", "us-west-2a", "spot")}}
	want := "creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient m5.large capacity in the Availability Zone you requested (us-west-2a). Our system will be working on provisioning additional capacity.; InsufficientInstanceCapacity: There is no Spot capacity available that matches your request."
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}
