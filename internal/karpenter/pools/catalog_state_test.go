package pools

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
)

// A later command builds a new catalog: it must see the offerings an
// earlier one marked, and forget them on time, as one long run would.
func TestCatalogPersistsUnavailableOfferings(t *testing.T) {
	s := cluster.New("", 1)
	first := NewCatalog()
	first.MarkUnavailable(s, "m5.large", "us-west-2a", "spot")
	if s.Karpenter.AWS == nil || len(s.Karpenter.AWS.Unavailable) != 1 || s.Karpenter.AWS.UnavailableSeq != 1 {
		t.Fatalf("mark not persisted: %+v", s.Karpenter.AWS)
	}
	resumed := s.Clone()
	second := NewCatalog()
	second.syncState(resumed)
	if !second.Unavailable.IsUnavailable("m5.large", "us-west-2a", "spot", resumed.Now) {
		t.Error("a new catalog does not see the persisted mark")
	}
	if until, ok := second.UnavailableUntil(resumed, "m5.large", "us-west-2a", "spot"); !ok || !until.Equal(s.Now.Add(instancetype.UnavailableOfferingsTTL)) {
		t.Errorf("until %v %v", until, ok)
	}
	resumed.Now = resumed.Now.Add(instancetype.UnavailableOfferingsTTL + time.Second)
	second.syncState(resumed)
	if len(resumed.Karpenter.AWS.Unavailable) != 0 || resumed.Karpenter.AWS.UnavailableSeq != 2 {
		t.Errorf("expiry not persisted: %+v", resumed.Karpenter.AWS)
	}
	// The first catalog, used again on the resumed state, follows it.
	first.syncState(resumed)
	if first.Unavailable.IsUnavailable("m5.large", "us-west-2a", "spot", resumed.Now) || first.Unavailable.SeqNum != 2 {
		t.Error("stale catalog not refreshed from the state")
	}
}

func TestCatalogSpotPricesFromState(t *testing.T) {
	s := cluster.New("", 1)
	c := NewCatalog()
	c.syncState(s)
	if c.Pricing != nil {
		t.Fatal("no prices in the state, yet a Pricing")
	}
	s.Karpenter.AWSState().SpotPrices = []cluster.SpotPrice{{InstanceType: "m5.large", Zone: "us-west-2a", Price: 0.02}}
	s.Karpenter.AWS.SpotPriceSource = "spot.json"
	c.syncState(s)
	if p, _, ok := c.Pricing.SpotPriceObserved("m5.large", "us-west-2a"); !ok || p != 0.02 {
		t.Errorf("price %v %v, want 0.02", p, ok)
	}
}
