package diff

import (
	"strings"
	"testing"

	"github.com/berth-sim/berth/ca-conformance/berthrun"
	"github.com/berth-sim/berth/ca-conformance/generator"
	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// A runner that answers "no scale-up, every pod remains" is a possible
// autoscaler answer on any scenario; one that grows every group past its
// max is caught on every seed.
func TestCheckGenerated(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	idle := berthrun.RunnerFunc(func(sc *scenario.Scenario) (*scenario.Result, error) {
		r := &scenario.Result{}
		for _, p := range sc.Pods {
			r.Remaining = append(r.Remaining, p.Name)
		}
		return r, nil
	})
	for _, o := range CheckGenerated(idle, seeds) {
		if !o.Agrees() {
			t.Errorf("%s: %v %q", o.Case, o.Err, o.Diffs)
		}
	}
	greedy := berthrun.RunnerFunc(func(sc *scenario.Scenario) (*scenario.Result, error) {
		r := &scenario.Result{}
		for _, g := range sc.NodeGroups {
			size, _ := sc.GroupSize(g.Name)
			r.ScaleUp = append(r.ScaleUp, scenario.GroupChange{Group: g.Name, From: size, To: g.Max + 1})
		}
		return r, nil
	})
	for _, o := range CheckGenerated(greedy, seeds) {
		if o.Agrees() || !strings.Contains(strings.Join(o.Diffs, "\n"), "outside") {
			t.Errorf("%s: past-max resize not caught: %q", o.Case, o.Diffs)
		}
	}
}

// BenchmarkScaleUp5000Pods50Groups times one decision of berth's
// autoscaler on the benchmark shape (generator.Bench): 5,000
// pending pods over 50 node groups, through berthrun (objects built too).
func BenchmarkScaleUp5000Pods50Groups(b *testing.B) {
	sc := generator.Generate(1, generator.Bench)
	for b.Loop() {
		if _, err := berthrun.Default.Run(sc); err != nil {
			b.Fatal(err)
		}
	}
}
