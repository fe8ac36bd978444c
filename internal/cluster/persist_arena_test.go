package cluster

import (
	"bytes"
	"testing"
)

// TestArenaKeepsValues: every value cut from the arena keeps its bytes
// while later ones are added (blocks never move), a value larger than a
// block gets a block of its own, and reset reuses the blocks.
func TestArenaKeepsValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
	}{
		{"small", []int{1, 10, 100, 1000}},
		{"fills blocks", []int{arenaBlock / 3, arenaBlock / 3, arenaBlock / 3, arenaBlock / 3, 7}},
		{"larger than a block", []int{5, arenaBlock + 1, 9, 2 * arenaBlock}},
		{"empty", []int{0, 3, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &arena{}
			for round := 0; round < 2; round++ {
				a.reset()
				var got, want [][]byte
				for i, n := range tc.sizes {
					v := bytes.Repeat([]byte{byte(i + 1 + round)}, n)
					got = append(got, a.add(v))
					want = append(want, v)
				}
				for i := range want {
					if !bytes.Equal(got[i], want[i]) {
						t.Fatalf("round %d: value %d changed after later adds", round, i)
					}
					if cap(got[i]) != len(got[i]) {
						t.Fatalf("round %d: value %d has spare capacity %d (an append would overwrite its neighbour)", round, i, cap(got[i])-len(got[i]))
					}
				}
			}
			blocks := len(a.blocks)
			a.reset()
			for i, n := range tc.sizes {
				a.add(bytes.Repeat([]byte{byte(i)}, n))
			}
			if len(a.blocks) != blocks {
				t.Errorf("the same batch again took %d blocks, want the %d it had", len(a.blocks), blocks)
			}
		})
	}
}
