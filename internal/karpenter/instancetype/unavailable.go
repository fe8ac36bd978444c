package instancetype

import "time"

// UnavailableOfferingsTTL is how long an insufficient-capacity error keeps
// an offering out (aws/karpenter-provider-aws pkg/cache/cache.go).
const UnavailableOfferingsTTL = 3 * time.Minute

// UnavailableOfferings remembers offerings that recently failed to launch
// (upstream pkg/cache/unavailableofferings.go), by offering, by whole
// capacity type and by whole zone. Entries expire TTL after their last
// mark, in the caller's (virtual) time. A nil cache marks nothing
// unavailable. docs/karpenter-instance-types.md#unavailable-offerings
type UnavailableOfferings struct {
	// TTL defaults to UnavailableOfferingsTTL when zero.
	TTL time.Duration
	// SeqNum counts marks and expiries seen, as upstream's cache-key input.
	SeqNum uint64

	offerings, capacityTypes, zones map[string]time.Time // key -> expiry
}

// NewUnavailableOfferings returns an empty cache with the upstream TTL.
func NewUnavailableOfferings() *UnavailableOfferings {
	return &UnavailableOfferings{TTL: UnavailableOfferingsTTL}
}

// offeringKey is upstream's "<capacityType>:<instanceType>:<zone>".
func offeringKey(instanceType, zone, capacityType string) string {
	return capacityType + ":" + instanceType + ":" + zone
}

func (u *UnavailableOfferings) ttl() time.Duration {
	if u.TTL == 0 {
		return UnavailableOfferingsTTL
	}
	return u.TTL
}

func (u *UnavailableOfferings) set(m *map[string]time.Time, key string, now time.Time) {
	if *m == nil {
		*m = map[string]time.Time{}
	}
	// Marking again extends the entry, as go-cache's SetDefault does.
	(*m)[key] = now.Add(u.ttl())
	u.SeqNum++
}

// MarkUnavailable takes one offering out until now+TTL.
func (u *UnavailableOfferings) MarkUnavailable(instanceType, zone, capacityType string, now time.Time) {
	u.set(&u.offerings, offeringKey(instanceType, zone, capacityType), now)
}

// MarkCapacityTypeUnavailable takes every offering of a capacity type out.
func (u *UnavailableOfferings) MarkCapacityTypeUnavailable(capacityType string, now time.Time) {
	u.set(&u.capacityTypes, capacityType, now)
}

// MarkAZUnavailable takes every offering in a zone out.
func (u *UnavailableOfferings) MarkAZUnavailable(zone string, now time.Time) {
	u.set(&u.zones, zone, now)
}

// live reports whether key is present and not expired; go-cache expires an
// item only once now is strictly after its expiry, and so does berth.
func live(m map[string]time.Time, key string, now time.Time) bool {
	exp, ok := m[key]
	return ok && !now.After(exp)
}

// IsUnavailable reports whether the offering, its capacity type or its zone
// is marked at now.
func (u *UnavailableOfferings) IsUnavailable(instanceType, zone, capacityType string, now time.Time) bool {
	if u == nil {
		return false
	}
	return live(u.offerings, offeringKey(instanceType, zone, capacityType), now) ||
		live(u.capacityTypes, capacityType, now) || live(u.zones, zone, now)
}

// Delete forgets one offering's mark.
func (u *UnavailableOfferings) Delete(instanceType, zone, capacityType string) {
	delete(u.offerings, offeringKey(instanceType, zone, capacityType))
}

// Flush forgets everything.
func (u *UnavailableOfferings) Flush() {
	u.offerings, u.capacityTypes, u.zones = nil, nil, nil
}

// Expire drops entries expired at now, counting each in SeqNum as
// upstream's eviction callback does; lookups never need it.
func (u *UnavailableOfferings) Expire(now time.Time) {
	for _, m := range []map[string]time.Time{u.offerings, u.capacityTypes, u.zones} {
		for key, exp := range m {
			if now.After(exp) {
				delete(m, key)
				u.SeqNum++
			}
		}
	}
}
