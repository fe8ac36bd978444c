package instancetype

import (
	corev1 "k8s.io/api/core/v1"
	"math"

	"github.com/berth-sim/berth/internal/karpenter/scheduling"
)

// Offering is where a type can be bought: one zone and capacity type, with
// an hourly price and whether it can be launched now (upstream
// cloudprovider.Offering). Requirements carry zone, capacity type, zone-id
// when known, and DoesNotExist for the reservation keys. List shares one
// Requirements value between all types' offerings of a zone and capacity
// type: never mutate it.
type Offering struct {
	Requirements scheduling.Requirements
	Price        float64
	Available    bool

	zone, capacityType string
}

// Zone is the offering's topology.kubernetes.io/zone.
func (o *Offering) Zone() string { return o.zone }

// CapacityType is the offering's karpenter.sh/capacity-type.
func (o *Offering) CapacityType() string { return o.capacityType }

// Offerings is a type's offerings.
type Offerings []*Offering

// Available keeps the available offerings.
func (ofs Offerings) Available() Offerings {
	var out Offerings
	for _, o := range ofs {
		if o.Available {
			out = append(out, o)
		}
	}
	return out
}

// Compatible keeps the offerings compatible with reqs.
func (ofs Offerings) Compatible(reqs scheduling.Requirements) Offerings {
	var out Offerings
	for _, o := range ofs {
		if reqs.IsCompatible(o.Requirements, allowWellKnown) {
			out = append(out, o)
		}
	}
	return out
}

// HasCompatible reports whether any offering is compatible with reqs.
func (ofs Offerings) HasCompatible(reqs scheduling.Requirements) bool {
	for _, o := range ofs {
		if reqs.IsCompatible(o.Requirements, allowWellKnown) {
			return true
		}
	}
	return false
}

// Cheapest is the first lowest-priced offering, nil if there are none.
func (ofs Offerings) Cheapest() *Offering {
	var best *Offering
	for _, o := range ofs {
		if best == nil || o.Price < best.Price {
			best = o
		}
	}
	return best
}

// MostExpensive is the first highest-priced offering, nil if none.
func (ofs Offerings) MostExpensive() *Offering {
	var best *Offering
	for _, o := range ofs {
		if best == nil || o.Price > best.Price {
			best = o
		}
	}
	return best
}

// capacityTypeReqs are the launch preference order: reserved, spot,
// on-demand (upstream ReservedRequirement, SpotRequirement, OnDemandRequirement).
var capacityTypeReqs = []scheduling.Requirements{
	scheduling.NewRequirements(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, scheduling.CapacityTypeReserved)),
	scheduling.NewRequirements(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, scheduling.CapacityTypeSpot)),
	scheduling.NewRequirements(scheduling.NewRequirement(scheduling.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, scheduling.CapacityTypeOnDemand)),
}

// WorstLaunchPrice is the highest price among offerings compatible with
// reqs of the capacity type a launch would use (reserved, then spot, then
// on-demand); MaxFloat64 if none.
func (ofs Offerings) WorstLaunchPrice(reqs scheduling.Requirements) float64 {
	compatible := ofs.Compatible(reqs)
	for _, ct := range capacityTypeReqs {
		if c := compatible.Compatible(ct); len(c) != 0 {
			return c.MostExpensive().Price
		}
	}
	return math.MaxFloat64
}
