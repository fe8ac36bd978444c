package noderesources

import (
	"math"
	"math/rand"
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// balanced is the general computation balanced2 replaces: (1 − std-dev of the used fractions) × 100; with two resources
// the std-dev is half their difference. Resources without allocatable are left out.
func balanced(requested, allocatable [2]int64) int64 {
	var buf [2]float64
	fractions := buf[:0]
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		fractions = append(fractions, math.Min(1, float64(requested[i])/float64(allocatable[i])))
	}
	var std float64
	switch {
	case len(fractions) == 2:
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	case len(fractions) > 2:
		var sum float64
		for _, f := range fractions {
			sum += f
		}
		mean := sum / float64(len(fractions))
		var v float64
		for _, f := range fractions {
			v += (f - mean) * (f - mean)
		}
		std = math.Sqrt(v / float64(len(fractions)))
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}

// TestBalanced2MatchesBalanced compares balanced2 with the general
// computation on random, extreme and zero requests and allocatables.
func TestBalanced2MatchesBalanced(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	pick := func() int64 {
		switch r.Intn(7) {
		case 0:
			return 0
		case 6:
			return -r.Int63n(1 << 40)
		case 1:
			return r.Int63()
		case 2:
			return int64(r.Intn(64000))
		case 3:
			return int64(r.Intn(1<<20)) << 20
		default:
			return r.Int63n(1 << 40)
		}
	}
	for i := 0; i < 200000; i++ {
		rc, rm, ac, am := pick(), pick(), pick(), pick()
		want := balanced([2]int64{rc, rm}, [2]int64{ac, am})
		if got := balanced2(rc, rm, ac, am); got != want {
			t.Fatalf("balanced2(%d, %d, %d, %d) = %d, want %d", rc, rm, ac, am, got, want)
		}
	}
}

// TestMinOneMatchesMin checks minOne against math.Min(1, f) bit for bit on
// edges (signed zeros, one, its neighbours, infinities) and random values.
func TestMinOneMatchesMin(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), 1, math.Nextafter(1, 0), math.Nextafter(1, 2), -1, math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64}
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 10000; i++ {
		values = append(values, (r.Float64()-0.3)*4)
	}
	for _, f := range values {
		if got, want := minOne(f), math.Min(1, f); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("minOne(%v) = %v, want %v", f, got, want)
		}
	}
}
