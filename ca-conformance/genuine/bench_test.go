//go:build genuine

package genuine

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-sim/berth/ca-conformance/berthrun"
	"github.com/berth-sim/berth/ca-conformance/diff"
	"github.com/berth-sim/berth/ca-conformance/generator"
	"github.com/berth-sim/berth/ca-conformance/scenario"
	"github.com/berth-sim/berth/internal/autoscaler/scaleup"
)

// The side-by-side measurement of issue 12 (README, "Speed"): one scale-up
// decision on berth's BenchmarkPlan5000x50 scenario, 5,000 pending pods
// over 50 node groups, by the genuine orchestrator and by berth's
// scaleup.Plan. Both include turning the scenario into objects; neither
// runs a scale-down pass. Run with -cpu 1 and read cpu-ns/op on a shared
// host:
//
//	ca-conformance/genuine/run.sh /tmp/ca-src -run '^$' -bench Plan5000x50 -cpu 1 -benchmem

func BenchmarkPlan5000x50Genuine(b *testing.B) {
	sc := generator.Plan5000x50()
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		out, err := Run(sc)
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Result.ScaleUp) == 0 {
			b.Fatal("no scale-up")
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkPlan5000x50Berth(b *testing.B) {
	sc := generator.Plan5000x50()
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		in, _, err := berthrun.PlanInput(sc)
		if err != nil {
			b.Fatal(err)
		}
		res, err := scaleup.Plan(in)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Increases) == 0 {
			b.Fatal("no scale-up")
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// TestPlan5000x50 holds berth's answer on the benchmark scenario against
// the genuine one, so the speed comparison is between equal decisions; the
// answers are summarised (the full pod lists run to thousands of names).
func TestPlan5000x50(t *testing.T) {
	sc := generator.Plan5000x50()
	g, err := Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := berthrun.Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("genuine: %s", summary(g.Result))
	t.Logf("berth:   %s", summary(b))
	if inv := diff.Invariants(sc, g.Result); len(inv) > 0 {
		t.Errorf("genuine breaks an invariant: %v", inv)
	}
	d := diff.Compare(byClass(sc, g.Result), byClass(sc, b))
	switch {
	case g.Tie:
		t.Logf("expander tie, not compared")
	case len(d) > 0:
		t.Errorf("berth differs from genuine in %d fields (first: %.200s)", len(d), d[0])
	}
}

// summary is a result in one line: the resize, then each option's group,
// nodes and pod count, then the pod list sizes.
func summary(r *scenario.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scaleUp=%v options=[", r.ScaleUp)
	for i, o := range r.Options {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s+%d/%dpods", o.Group, o.Nodes, len(o.Pods))
	}
	fmt.Fprintf(&b, "] triggered=%d remaining=%d awaiting=%d", len(r.Triggered), len(r.Remaining), len(r.Awaiting))
	return b.String()
}

// processCPU is the process's user plus system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
