package cluster

import "time"

// KarpenterAWS is what the user told berth about EC2 and what the AWS
// provider remembers between reconciles: supplied spot prices, offerings
// EC2 has no capacity for, the unavailable-offerings (ICE) cache, pending
// spot interruption notices, and which plan/binding divergences were
// already reported (docs/karpenter-interruption.md).
type KarpenterAWS struct {
	// SpotPrices are the latest describe-spot-price-history observation
	// per instance type and zone, sorted by type then zone.
	SpotPrices []SpotPrice `json:"spotPrices,omitempty"`
	// SpotPriceSource names the file the prices came from.
	SpotPriceSource string `json:"spotPriceSource,omitempty"`
	// NoCapacity are offerings EC2 cannot launch (user-declared), sorted.
	NoCapacity []NoCapacity `json:"noCapacity,omitempty"`
	// Unavailable is Karpenter's unavailable-offerings cache and its
	// sequence number, so a resumed run sees the same offerings.
	Unavailable    []UnavailableEntry `json:"unavailable,omitempty"`
	UnavailableSeq uint64             `json:"unavailableSeq,omitempty"`
	// Interruptions are spot interruption notices whose instance EC2 has
	// not reclaimed yet.
	Interruptions []SpotInterruption `json:"interruptions,omitempty"`
	// Reported are the divergence reports already published, by key.
	Reported []string `json:"reported,omitempty"`
}

// AWSState returns the AWS memory, allocating it on first use (nil keeps
// states that never needed it unchanged on disk).
func (k *KarpenterState) AWSState() *KarpenterAWS {
	if k.AWS == nil {
		k.AWS = &KarpenterAWS{}
	}
	return k.AWS
}

// SpotPrice is one (type, zone) spot price and when EC2 observed it.
type SpotPrice struct {
	InstanceType string    `json:"instanceType"`
	Zone         string    `json:"zone"`
	Price        float64   `json:"price"`
	Timestamp    time.Time `json:"timestamp"`
}

// NoCapacity is an offering EC2 answers InsufficientInstanceCapacity for,
// until Until (zero: until cleared).
type NoCapacity struct {
	InstanceType string    `json:"instanceType"`
	Zone         string    `json:"zone"`
	CapacityType string    `json:"capacityType"`
	Until        time.Time `json:"until,omitempty"`
}

// Active reports whether the outage holds at now.
func (n NoCapacity) Active(now time.Time) bool {
	return n.Until.IsZero() || now.Before(n.Until)
}

// UnavailableEntry is one unavailable-offerings cache entry: Kind is
// "offering" (Key "<capacityType>:<type>:<zone>"), "capacityType" or
// "zone"; it expires at Expires.
type UnavailableEntry struct {
	Kind    string    `json:"kind"`
	Key     string    `json:"key"`
	Expires time.Time `json:"expires"`
}

// SpotInterruption is a two-minute warning EC2 sent for an instance.
type SpotInterruption struct {
	NodeClaim  string    `json:"nodeClaim"`
	Node       string    `json:"node,omitempty"`
	ProviderID string    `json:"providerID"`
	NoticeAt   time.Time `json:"noticeAt"`
	ReclaimAt  time.Time `json:"reclaimAt"`
	// Handled is set once Karpenter's interruption controller acted on it.
	Handled bool `json:"handled,omitempty"`
}
