//go:build genuine

package genuine

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/ca-conformance/berthrun"
	"github.com/berth-sim/berth/ca-conformance/diff"
	"github.com/berth-sim/berth/ca-conformance/generator"
	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// TestSeed prints, for GENUINE_SEED, every distinct genuine answer over
// GENUINE_MAX_RUNS samples (default 100) with how often it came up, and
// how each differs from berth's: the tool for looking into one
// disagreement. Skipped without GENUINE_SEED.
func TestSeed(t *testing.T) {
	v := os.Getenv("GENUINE_SEED")
	if v == "" {
		t.Skip("GENUINE_SEED not set")
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("GENUINE_SEED=%q: %v", v, err)
	}
	sc := generator.Small(seed)
	b, err := berthrun.Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	bc := byClass(sc, b)
	var answers []*scenario.Result
	var counts []int
	runs := envCount(t, "GENUINE_MAX_RUNS", 100)
	for n := 0; n < runs; n++ {
		{
			g := sample(t, sc, b)
			gc := byClass(sc, g.Result)
			i := 0
			for ; i < len(answers); i++ {
				if len(diff.Compare(answers[i], gc)) == 0 {
					break
				}
			}
			if i == len(answers) {
				answers, counts = append(answers, gc), append(counts, 0)
			}
			counts[i]++
		}
	}
	by, _ := yaml.Marshal(bc)
	t.Logf("berth:\n%s", by)
	for i, a := range answers {
		ay, _ := yaml.Marshal(a)
		t.Logf("genuine answer %d (%d times):\n%s\n  differs from berth's: %s", i, counts[i], ay,
			strings.Join(diff.Compare(a, bc), "\n    "))
	}
}
