package instancetype

import (
	"encoding/json"
	"errors"
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
// Errors name the entry (SpotPriceHistory[i]) and the field; p is left
// unchanged when the input is bad.
func (p *Pricing) LoadSpotPriceHistory(r io.Reader) error {
	var raw struct {
		SpotPriceHistory *[]json.RawMessage `json:"SpotPriceHistory"`
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return fmt.Errorf("parsing spot price history: %w", err)
	}
	if raw.SpotPriceHistory == nil {
		return fmt.Errorf("parsing spot price history: no SpotPriceHistory array (want the JSON `aws ec2 describe-spot-price-history` prints)")
	}
	next := map[spotKey]spotPoint{}
	for k, v := range p.spot {
		next[k] = v
	}
	for i, msg := range *raw.SpotPriceHistory {
		var e SpotPriceEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			var te *json.UnmarshalTypeError
			var pe *time.ParseError
			switch {
			case errors.As(err, &te) && te.Field != "":
				return fmt.Errorf("SpotPriceHistory[%d].%s: want a JSON %s, got %s", i, te.Field, te.Type, te.Value)
			case errors.As(err, &pe):
				return fmt.Errorf("SpotPriceHistory[%d].Timestamp: %q is not an RFC 3339 time such as 2025-11-20T10:40:55+00:00", i, pe.Value)
			}
			return fmt.Errorf("SpotPriceHistory[%d]: %w", i, err)
		}
		if !spotProducts[e.ProductDescription] {
			continue
		}
		if e.InstanceType == "" {
			return fmt.Errorf("SpotPriceHistory[%d].InstanceType: required", i)
		}
		if e.AvailabilityZone == "" {
			return fmt.Errorf("SpotPriceHistory[%d].AvailabilityZone: required (%s)", i, e.InstanceType)
		}
		price, err := strconv.ParseFloat(e.SpotPrice, 64)
		if err != nil || price < 0 {
			return fmt.Errorf("SpotPriceHistory[%d].SpotPrice: bad price %q (%s in %s): want a non-negative decimal string such as \"0.0312\"",
				i, e.SpotPrice, e.InstanceType, e.AvailabilityZone)
		}
		key := spotKey{e.InstanceType, e.AvailabilityZone}
		if cur, ok := next[key]; !ok || !e.Timestamp.Before(cur.at) {
			next[key] = spotPoint{price: price, at: e.Timestamp}
		}
	}
	p.spot = next
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
