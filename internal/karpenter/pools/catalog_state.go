package pools

import (
	"fmt"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/instancetype"
)

// syncState makes the catalog agree with what the state persists: the
// unavailable-offerings cache (restored when the state's copy is newer,
// expired at the state's clock and written back) and the supplied spot
// prices. A run resumed from disk therefore sees the offerings and prices
// an uninterrupted one would (docs/karpenter-instance-types.md#unavailable-offerings).
func (c *Catalog) syncState(s *cluster.State) {
	aws := s.Karpenter.AWS
	var stateSeq uint64
	if aws != nil {
		stateSeq = aws.UnavailableSeq
	}
	// Both sequence numbers only grow: a state ahead of the catalog holds
	// the newer cache (a new command's catalog, a resumed run). A catalog
	// ahead of its state was marked directly (a harness restricting the
	// catalog) and keeps its marks in memory, as before they were persisted.
	if stateSeq > c.Unavailable.SeqNum {
		c.Unavailable.Restore(aws.Unavailable, aws.UnavailableSeq)
	}
	before := c.Unavailable.SeqNum
	c.Unavailable.Expire(s.Now)
	if c.Unavailable.SeqNum != before {
		c.persist(s)
	}
	key := ""
	if aws != nil && len(aws.SpotPrices) > 0 {
		key = fmt.Sprintf("%s/%d/%v", aws.SpotPriceSource, len(aws.SpotPrices), aws.SpotPrices[len(aws.SpotPrices)-1])
	}
	if key != c.pricingKey || (key != "" && c.Pricing == nil) {
		c.Pricing, c.pricingKey = instancetype.PricingFromState(aws), key
	}
}

// persist writes the unavailable-offerings cache into the state.
func (c *Catalog) persist(s *cluster.State) {
	aws := s.Karpenter.AWSState()
	aws.Unavailable, aws.UnavailableSeq = c.Unavailable.Entries(), c.Unavailable.SeqNum
}

// MarkUnavailable puts an offering into the unavailable-offerings cache for
// UnavailableOfferingsTTL and persists the cache: a launch's capacity error
// and a spot interruption do this.
func (c *Catalog) MarkUnavailable(s *cluster.State, instanceType, zone, capacityType string) {
	c.syncState(s)
	c.Unavailable.MarkUnavailable(instanceType, zone, capacityType, s.Now)
	c.persist(s)
}

// UnavailableUntil is when the offering's cache entry expires, false when
// the offering is not in the cache at the state's clock.
func (c *Catalog) UnavailableUntil(s *cluster.State, instanceType, zone, capacityType string) (time.Time, bool) {
	c.syncState(s)
	for _, e := range c.Unavailable.Entries() {
		if e.Kind == "offering" && e.Key == capacityType+":"+instanceType+":"+zone && !s.Now.After(e.Expires) {
			return e.Expires, true
		}
	}
	return time.Time{}, false
}
