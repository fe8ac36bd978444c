package framework

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

type testData struct{ v int }

func (d *testData) Clone() StateData { c := *d; return &c }

// TestCycleStateMatchesMap drives the slot list and a map with the same
// random writes (new keys, overwrites, nil data), reads and clones, and
// compares every read.
func TestCycleStateMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		cs, ref := NewCycleState(), map[StateKey]StateData{}
		for op := 0; op < 60; op++ {
			key := StateKey(fmt.Sprintf("PreFilterPlugin%d", r.IntN(12)))
			switch r.IntN(4) {
			case 0:
				var d StateData
				if r.IntN(5) > 0 {
					d = &testData{r.IntN(100)}
				}
				cs.Write(key, d)
				ref[key] = d
			case 1:
				c := cs.Clone()
				for k, v := range ref {
					got := c.Read(k)
					if v == nil {
						if got != nil {
							t.Fatalf("round %d: clone has %v under %s, want nothing", round, got, k)
						}
						continue
					}
					if got == v || got.(*testData).v != v.(*testData).v {
						t.Fatalf("round %d: clone %v under %s, want a copy of %v", round, got, k, v)
					}
				}
			default:
				got, want := cs.Read(key), ref[key]
				if got != want {
					t.Fatalf("round %d: Read(%s) = %v, want %v", round, key, got, want)
				}
			}
		}
	}
}
