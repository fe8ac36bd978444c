package instancetype

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/berth-sim/berth/internal/aws"
)

// DefaultSpotFraction prices spot at 0.7 x on-demand where no spot price was
// supplied: the ratio of upstream's synthetic KWOK catalog. Karpenter itself
// uses the on-demand price until its first DescribeSpotPriceHistory read.
// docs/karpenter-instance-types.md#prices
const DefaultSpotFraction = 0.7

// spotProducts are the product descriptions Karpenter asks EC2 for
// (pkg/providers/pricing/pricing.go UpdateSpotPricing): Linux only.
var spotProducts = map[string]bool{"Linux/UNIX": true, "Linux/UNIX (Amazon VPC)": true}

// Pricing answers on-demand prices from the catalog and spot prices from
// supplied observations, else SpotFraction x on-demand. A nil *Pricing is
// the default. Not safe for concurrent writes.
type Pricing struct {
	// SpotFraction is used when zero-valued: DefaultSpotFraction.
	SpotFraction float64
	spot         map[spotKey]spotPoint
}

type spotKey struct{ instanceType, zone string }

type spotPoint struct {
	price float64
	at    time.Time
}

// OnDemandPrice is the catalog's hourly on-demand price in region.
func (p *Pricing) OnDemandPrice(it *aws.InstanceType, region string) (float64, bool) {
	return it.OnDemandPrice(region)
}

// SpotPrice is the supplied spot price for (type, zone), else the fraction
// of the on-demand price in region; false when neither is known.
func (p *Pricing) SpotPrice(it *aws.InstanceType, region, zone string) (float64, bool) {
	if p != nil {
		if pt, ok := p.spot[spotKey{it.Name, zone}]; ok {
			return pt.price, true
		}
	}
	od, ok := it.OnDemandPrice(region)
	if !ok {
		return 0, false
	}
	fraction := DefaultSpotFraction
	if p != nil && p.SpotFraction > 0 {
		fraction = p.SpotFraction
	}
	return od * fraction, true
}

// SpotPriceHistory is what `aws ec2 describe-spot-price-history` prints.
type SpotPriceHistory struct {
	SpotPriceHistory []SpotPriceEntry `json:"SpotPriceHistory"`
}

// SpotPriceEntry is one observation; SpotPrice is a decimal string.
type SpotPriceEntry struct {
	AvailabilityZone   string    `json:"AvailabilityZone"`
	InstanceType       string    `json:"InstanceType"`
	ProductDescription string    `json:"ProductDescription"`
	SpotPrice          string    `json:"SpotPrice"`
	Timestamp          time.Time `json:"Timestamp"`
}

// LoadSpotPriceHistory merges describe-spot-price-history JSON into p: the
// latest observation per (type, zone) wins, non-Linux products are skipped.
func (p *Pricing) LoadSpotPriceHistory(r io.Reader) error {
	var h SpotPriceHistory
	if err := json.NewDecoder(r).Decode(&h); err != nil {
		return fmt.Errorf("parsing spot price history: %w", err)
	}
	if p.spot == nil {
		p.spot = map[spotKey]spotPoint{}
	}
	for i, e := range h.SpotPriceHistory {
		if !spotProducts[e.ProductDescription] {
			continue
		}
		if e.InstanceType == "" || e.AvailabilityZone == "" {
			return fmt.Errorf("spot price history entry %d: missing InstanceType or AvailabilityZone", i)
		}
		price, err := strconv.ParseFloat(e.SpotPrice, 64)
		if err != nil || price < 0 {
			return fmt.Errorf("spot price history entry %d (%s in %s): bad SpotPrice %q", i, e.InstanceType, e.AvailabilityZone, e.SpotPrice)
		}
		key := spotKey{e.InstanceType, e.AvailabilityZone}
		if cur, ok := p.spot[key]; !ok || !e.Timestamp.Before(cur.at) {
			p.spot[key] = spotPoint{price: price, at: e.Timestamp}
		}
	}
	return nil
}

// ParseSpotPriceHistory builds a Pricing from describe-spot-price-history JSON.
func ParseSpotPriceHistory(r io.Reader) (*Pricing, error) {
	p := &Pricing{}
	if err := p.LoadSpotPriceHistory(r); err != nil {
		return nil, err
	}
	return p, nil
}
