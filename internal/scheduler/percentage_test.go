package scheduler

import "testing"

func TestNumFeasibleNodesToFindWithPercentage(t *testing.T) {
	for _, tc := range []struct {
		pct  int32
		n    int
		want int
	}{
		{0, 50, 50},
		{100, 50, 50},
		{10, 99, 99},
		{100, 5000, 5000},
		{50, 1000, 500},
		{10, 500, 100}, // never fewer than 100
		{0, 5000, 500},
	} {
		if got := numFeasibleNodesToFind(tc.pct, tc.n); got != tc.want {
			t.Errorf("numFeasibleNodesToFind(%d, %d) = %d, want %d", tc.pct, tc.n, got, tc.want)
		}
	}
}
