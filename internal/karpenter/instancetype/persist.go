package instancetype

import (
	"sort"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
)

// Unavailable-offerings cache entry kinds as persisted in the state.
const (
	entryOffering     = "offering"
	entryCapacityType = "capacityType"
	entryZone         = "zone"
)

// Entries lists the cache's entries, sorted by kind then key, for the
// state (docs/karpenter-instance-types.md#unavailable-offerings).
func (u *UnavailableOfferings) Entries() []cluster.UnavailableEntry {
	var out []cluster.UnavailableEntry
	for _, m := range []struct {
		kind string
		m    map[string]time.Time
	}{{entryCapacityType, u.capacityTypes}, {entryOffering, u.offerings}, {entryZone, u.zones}} {
		for key, exp := range m.m {
			out = append(out, cluster.UnavailableEntry{Kind: m.kind, Key: key, Expires: exp})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// Restore replaces the cache's entries and sequence number with persisted
// ones; unknown kinds are ignored.
func (u *UnavailableOfferings) Restore(entries []cluster.UnavailableEntry, seq uint64) {
	u.Flush()
	for _, e := range entries {
		var m *map[string]time.Time
		switch e.Kind {
		case entryOffering:
			m = &u.offerings
		case entryCapacityType:
			m = &u.capacityTypes
		case entryZone:
			m = &u.zones
		default:
			continue
		}
		if *m == nil {
			*m = map[string]time.Time{}
		}
		(*m)[e.Key] = e.Expires
	}
	u.SeqNum = seq
}

// PricingFromState is the Pricing the state's supplied spot prices make,
// nil (the 0.7 x on-demand default) when there are none.
func PricingFromState(aws *cluster.KarpenterAWS) *Pricing {
	if aws == nil || len(aws.SpotPrices) == 0 {
		return nil
	}
	p := &Pricing{spot: map[spotKey]spotPoint{}}
	for _, sp := range aws.SpotPrices {
		p.spot[spotKey{sp.InstanceType, sp.Zone}] = spotPoint{price: sp.Price, at: sp.Timestamp}
	}
	return p
}

// SpotPrices lists the supplied spot prices, sorted by type then zone.
func (p *Pricing) SpotPrices() []cluster.SpotPrice {
	if p == nil {
		return nil
	}
	out := make([]cluster.SpotPrice, 0, len(p.spot))
	for k, pt := range p.spot {
		out = append(out, cluster.SpotPrice{InstanceType: k.instanceType, Zone: k.zone, Price: pt.price, Timestamp: pt.at})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].InstanceType != out[j].InstanceType {
			return out[i].InstanceType < out[j].InstanceType
		}
		return out[i].Zone < out[j].Zone
	})
	return out
}

// SpotPriceObserved is the supplied spot price for (type, zone) and when
// EC2 observed it; false when none was supplied.
func (p *Pricing) SpotPriceObserved(instanceType, zone string) (float64, time.Time, bool) {
	if p == nil {
		return 0, time.Time{}, false
	}
	pt, ok := p.spot[spotKey{instanceType, zone}]
	return pt.price, pt.at, ok
}
