package cluster

import (
	"fmt"
	"testing"
)

// TestUIDMatchesSprintf checks the hand-written UID against the format it
// replaces, over many draws (and edge values of the draws).
func TestUIDMatchesSprintf(t *testing.T) {
	plain := func(a, b uint64) string {
		return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a)&0xfff, (uint16(b>>48)&0x3fff)|0x8000, b&0xffffffffffff)
	}
	r := NewRand(7)
	for i := 0; i < 20000; i++ {
		probe := r // UID draws two numbers from a copy's state
		a, b := probe.Uint64(), probe.Uint64()
		if got, want := r.UID(), plain(a, b); got != want {
			t.Fatalf("draw %d: UID = %q, want %q", i, got, want)
		}
	}
}

func TestGenerateName(t *testing.T) {
	tests := []struct {
		base    string
		wantLen int
	}{
		{"", 5},
		{"web-7d4b9c-", 16},
		{"a-very-long-generate-name-prefix-that-goes-past-the-limit-of-it", 63},
	}
	for _, tc := range tests {
		s, probe := New("", 3), NewRand(3)
		base := tc.base
		if len(base) > 58 {
			base = base[:58]
		}
		want := base + probe.String(5)
		if got := s.GenerateName(tc.base); got != want || len(got) != tc.wantLen {
			t.Errorf("GenerateName(%q) = %q, want %q (%d characters)", tc.base, got, want, tc.wantLen)
		}
	}
}
