package podtopologyspread

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// sortedPaths is the reference: every domain fed to update in name order.
func sortedPaths(m map[string]int) *criticalPaths {
	p := newCriticalPaths()
	var values []string
	for v := range m {
		values = append(values, v)
	}
	sort.Strings(values)
	for _, v := range values {
		p.update(v, m[v])
	}
	return p
}

// TestTwoSmallestMatchesSortedUpdates checks the one-pass critical paths
// against name-ordered updates, ties and the empty domain name included.
func TestTwoSmallestMatchesSortedUpdates(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []map[string]int{
		{},
		{"": 0},
		{"a": 3},
		{"": 2, "a": 1},
		{"": 1, "a": 1, "b": 1},
		{"b": 0, "a": 0, "c": 0},
	}
	for i := 0; i < 500; i++ {
		m := map[string]int{}
		for j := r.IntN(8); j >= 0; j-- {
			m[fmt.Sprintf("d%d", r.IntN(10))] = r.IntN(4)
		}
		if r.IntN(3) == 0 {
			m[""] = r.IntN(4)
		}
		cases = append(cases, m)
	}
	for _, m := range cases {
		if got, want := *twoSmallest(m), *sortedPaths(m); got != want {
			t.Fatalf("%v: got %+v, want %+v", m, got, want)
		}
	}
}

// TestPathsByIDMatchesSortedUpdates checks the critical paths found while
// renumbering against name-ordered updates, with names listing more
// domains than the counts hold (nodes not taking part) and, now and then,
// fewer (the fallback), and the renumbered counts against the map.
func TestPathsByIDMatchesSortedUpdates(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 500; i++ {
		m := map[string]int{}
		var names []string
		for j := 0; j < 10; j++ {
			v := fmt.Sprintf("d%d", j)
			if j == 9 {
				v = ""
			}
			inNames, inMap := r.IntN(4) != 0, r.IntN(2) == 0
			if inMap && !inNames && r.IntN(4) != 0 {
				inNames = true
			}
			if inNames {
				names = append(names, v)
			}
			if inMap {
				m[v] = r.IntN(4)
			}
		}
		r.Shuffle(len(names), func(a, b int) { names[a], names[b] = names[b], names[a] })
		counts := make([]int, len(names))
		if got, want := *pathsByID(m, names, counts), *sortedPaths(m); got != want {
			t.Fatalf("%v over %q: got %+v, want %+v", m, names, got, want)
		}
		for id, v := range names {
			if counts[id] != m[v] {
				t.Fatalf("%v over %q: counts %v", m, names, counts)
			}
		}
	}
}
