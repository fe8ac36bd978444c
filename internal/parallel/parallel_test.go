package parallel

import (
	"runtime"
	"testing"
)

func TestForVisitsEveryIndexOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range []struct{ n, from int }{{0, 1}, {1, 1}, {5, 10}, {1000, 1}, {17, 1}} {
		seen := make([]int, tc.n)
		For(tc.n, tc.from, func(i int) { seen[i]++ })
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d from=%d: index %d visited %d times", tc.n, tc.from, i, c)
			}
		}
	}
}
