package interpodaffinity

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestCompactKeepsSums checks that merging the sources of a key leaves
// every answer of the counts unchanged, whether or not a merge pays off.
func TestCompactKeepsSums(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	keys := []string{"zone", "host", "rack"}
	for round := 0; round < 300; round++ {
		var sources []countSource
		for j := r.IntN(6); j >= 0; j-- {
			m := map[string]int64{}
			for k := r.IntN(5); k >= 0; k-- {
				m[fmt.Sprintf("v%d", r.IntN(6))] = int64(1 + r.IntN(3))
			}
			sources = append(sources, countSource{key: keys[r.IntN(len(keys))], counts: m})
		}
		var orig []map[string]int64
		for i := range sources {
			orig = append(orig, maps.Clone(sources[i].counts))
		}
		before := &lazyCounts{sources: append([]countSource(nil), sources...)}
		after := &lazyCounts{sources: append([]countSource(nil), sources...)}
		after.compact(r.IntN(20))
		if !reflect.DeepEqual(before.toMap(), after.toMap()) || before.empty() != after.empty() {
			t.Fatalf("round %d: %v became %v", round, before.toMap(), after.toMap())
		}
		for _, k := range keys {
			for v := 0; v < 6; v++ {
				val := fmt.Sprintf("v%d", v)
				if before.get(k, val) != after.get(k, val) {
					t.Fatalf("round %d: get(%s,%s) %d != %d", round, k, val, before.get(k, val), after.get(k, val))
				}
			}
		}
		// Shared index maps must not be written to.
		for i := range sources {
			if !reflect.DeepEqual(sources[i].counts, orig[i]) {
				t.Fatalf("round %d: source %d modified", round, i)
			}
		}
	}
}
