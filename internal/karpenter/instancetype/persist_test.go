package instancetype

import (
	"strings"
	"testing"
	"time"
)

func TestUnavailableEntriesRoundTrip(t *testing.T) {
	now := time.Unix(1000, 0)
	u := NewUnavailableOfferings()
	u.MarkUnavailable("m5.large", "us-west-2a", "spot", now)
	u.MarkCapacityTypeUnavailable("spot", now.Add(time.Minute))
	u.MarkAZUnavailable("us-west-2c", now)
	entries := u.Entries()
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.Kind+"="+e.Key)
	}
	if got, want := strings.Join(keys, " "), "capacityType=spot offering=spot:m5.large:us-west-2a zone=us-west-2c"; got != want {
		t.Errorf("entries %s, want %s", got, want)
	}
	r := NewUnavailableOfferings()
	r.Restore(entries, u.SeqNum)
	if r.SeqNum != 3 {
		t.Errorf("SeqNum %d, want 3", r.SeqNum)
	}
	for _, tc := range []struct {
		it, zone, ct string
		at           time.Time
		want         bool
	}{
		{"m5.large", "us-west-2a", "spot", now.Add(UnavailableOfferingsTTL), true},
		{"m5.large", "us-west-2a", "on-demand", now, false},
		{"m5.large", "us-west-2a", "on-demand", now, false},
		{"c5.large", "us-west-2b", "spot", now.Add(UnavailableOfferingsTTL + time.Minute), true},
		{"c5.large", "us-west-2b", "spot", now.Add(UnavailableOfferingsTTL + time.Minute + 1), false},
		{"c5.large", "us-west-2c", "on-demand", now, true},
	} {
		if got := r.IsUnavailable(tc.it, tc.zone, tc.ct, tc.at); got != tc.want {
			t.Errorf("restored %s %s %s at %v: %v, want %v", tc.it, tc.zone, tc.ct, tc.at.Sub(now), got, tc.want)
		}
	}
}

func TestLoadSpotPriceHistoryErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not json", `{`, "parsing spot price history: unexpected EOF"},
		{"no array", `{"Reservations": []}`, "no SpotPriceHistory array"},
		{"bad price", `{"SpotPriceHistory": [{"AvailabilityZone": "a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "x"}]}`,
			`SpotPriceHistory[0].SpotPrice: bad price "x"`},
		{"negative", `{"SpotPriceHistory": [{"AvailabilityZone": "a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "-1"}]}`,
			`SpotPriceHistory[0].SpotPrice: bad price "-1"`},
		{"number", `{"SpotPriceHistory": [{"SpotPrice": 1}]}`, "SpotPriceHistory[0].SpotPrice: want a JSON string, got number"},
		{"time", `{"SpotPriceHistory": [{"Timestamp": "soon"}]}`, `SpotPriceHistory[0].Timestamp: "soon" is not an RFC 3339 time`},
		{"no type", `{"SpotPriceHistory": [{"AvailabilityZone": "a", "ProductDescription": "Linux/UNIX", "SpotPrice": "1"}]}`,
			"SpotPriceHistory[0].InstanceType: required"},
		{"no zone", `{"SpotPriceHistory": [{}, {"InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "1"}]}`,
			"SpotPriceHistory[1].AvailabilityZone: required"},
	} {
		p := &Pricing{}
		err := p.LoadSpotPriceHistory(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
		if len(p.SpotPrices()) != 0 {
			t.Errorf("%s: a failed load kept %d prices", tc.name, len(p.SpotPrices()))
		}
	}
}

func TestLoadSpotPriceHistoryFailureKeepsPrices(t *testing.T) {
	p, err := ParseSpotPriceHistory(strings.NewReader(`{"SpotPriceHistory": [{"AvailabilityZone": "us-west-2a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.03", "Timestamp": "2025-11-20T10:00:00Z"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// The second entry is bad: the first (a newer price) must not be merged.
	err = p.LoadSpotPriceHistory(strings.NewReader(`{"SpotPriceHistory": [
		{"AvailabilityZone": "us-west-2a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.05", "Timestamp": "2025-11-21T10:00:00Z"},
		{"AvailabilityZone": "us-west-2a", "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX", "SpotPrice": "?"}]}`))
	if err == nil {
		t.Fatal("bad entry accepted")
	}
	if price, _, ok := p.SpotPriceObserved("m5.large", "us-west-2a"); !ok || price != 0.03 {
		t.Errorf("price after a failed load: %v %v, want 0.03", price, ok)
	}
	got := PricingFromState(nil)
	if got != nil {
		t.Error("no state prices should be the nil default Pricing")
	}
}
