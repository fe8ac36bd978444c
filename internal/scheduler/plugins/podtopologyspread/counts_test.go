package podtopologyspread

import (
	"maps"
	"math/rand/v2"
	"testing"
)

// countMaps is the state's counts as plain maps (made from the ids when
// PreFilter counted by id).
func countMaps(s *preFilterState) []map[string]int {
	out := make([]map[string]int, len(s.tpValueToMatchNum))
	for i, d := range s.tpValueToMatchNum {
		out[i] = d.asMap()
	}
	return out
}

// TestDomainCountsByIDMatchesMap checks, on random id counts, that the map
// made from the ids and the domain number are those of summing the seen
// ids into a map directly (what walkIndexed and countFromIndex did).
func TestDomainCountsByIDMatchesMap(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		n := r.IntN(12)
		names := make([]string, n)
		byID := make([]int, n)
		var seen []bool
		if r.IntN(2) == 0 {
			seen = make([]bool, n)
		}
		want := map[string]int{}
		for id := range names {
			names[id] = string(rune('a' + id))
			if seen != nil && r.IntN(3) == 0 {
				continue // an id no node took part with keeps 0 and is no domain
			}
			byID[id] = r.IntN(4)
			if seen != nil {
				seen[id] = true
			}
			want[names[id]] += byID[id]
		}
		d := idCountsOf(names, byID, seen)
		if got := d.size(); got != len(want) {
			t.Fatalf("seed %d: size %d, want %d", seed, got, len(want))
		}
		if got := d.asMap(); !maps.Equal(got, want) {
			t.Fatalf("seed %d: map %v, want %v", seed, got, want)
		}
		if m := mapCounts(want); m.size() != len(want) || !maps.Equal(m.asMap(), want) {
			t.Fatalf("seed %d: mapCounts changed the map", seed)
		}
	}
}
