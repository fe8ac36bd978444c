package version

import "testing"

func TestFeaturesFor(t *testing.T) {
	tests := []struct {
		in                  string
		keyValueTaint, dra  bool
		unresolvable, delta bool
	}{
		{"1.30", true, false, false, false},
		{"1.33", true, false, false, false},
		{"1.34.0", true, true, true, false},
		{"1.34.1", true, true, true, false},
		{"1.34.2", false, true, true, false},
		{"1.34", false, true, true, false},
		{"v1.35.4", false, true, true, false},
		{"1.36", false, true, true, true},
	}
	for _, tt := range tests {
		f := MustFeatures(tt.in)
		if f.TaintKeyValueText != tt.keyValueTaint || f.DynamicResources != tt.dra ||
			f.InsufficientUnresolvable != tt.unresolvable || f.BalancedAllocationDelta != tt.delta {
			t.Errorf("%s: got %+v", tt.in, f)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{"", "1", "2.30", "1.x", "1.20", "1.40", "1.30.1.2"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}
