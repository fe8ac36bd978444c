package podtopologyspread

import (
	"math"
	"math/rand"
	"testing"
)

// TestRoundScoreMatchesRound compares roundScore with math.Round on
// random values, halves, the neighbours of halves and the edges of the
// fast range.
func TestRoundScoreMatchesRound(t *testing.T) {
	check := func(x float64) {
		t.Helper()
		if got, want := roundScore(x), int64(math.Round(x)); got != want {
			t.Fatalf("roundScore(%v) = %d, want %d", x, got, want)
		}
	}
	for _, x := range []float64{0, math.Copysign(0, -1), 0.5, 1.5, 2.5, -0.5, -1.5, 0.49999999999999994, 1<<52 - 0.5, 1 << 52, 1<<52 + 1, 1 << 53, -1 << 53, math.SmallestNonzeroFloat64} {
		check(x)
	}
	r := rand.New(rand.NewSource(9))
	for i := 0; i < 1000000; i++ {
		var x float64
		switch i % 4 {
		case 0:
			x = r.Float64() * 1000
		case 1:
			x = float64(r.Intn(1<<20)) + 0.5
		case 2:
			h := float64(r.Intn(1<<20)) + 0.5
			if r.Intn(2) == 0 {
				x = math.Nextafter(h, 0)
			} else {
				x = math.Nextafter(h, math.Inf(1))
			}
		default:
			x = (r.Float64() - 0.25) * math.Ldexp(1, r.Intn(60))
		}
		check(x)
	}
}
