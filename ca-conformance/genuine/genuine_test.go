//go:build genuine

package genuine

import (
	"flag"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"k8s.io/klog/v2"

	"github.com/berth-sim/berth/ca-conformance/berthrun"
	"github.com/berth-sim/berth/ca-conformance/cases"
	"github.com/berth-sim/berth/ca-conformance/diff"
	"github.com/berth-sim/berth/ca-conformance/generator"
	"github.com/berth-sim/berth/ca-conformance/regressions"
	"github.com/berth-sim/berth/ca-conformance/scenario"
)

func TestMain(m *testing.M) {
	// The autoscaler logs through klog; keep test output to the findings.
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// compare holds berth's answer against the genuine one (the genuine result
// is "want": its unset scale-down fields are not compared).
func compare(t *testing.T, sc *scenario.Scenario) (g *Outcome, diffs []string) {
	t.Helper()
	g, err := Run(sc)
	if err != nil {
		t.Fatalf("%s: genuine: %v", sc.Name, err)
	}
	b, err := berthrun.Run(sc)
	if err != nil {
		return g, []string{"berth error: " + err.Error()}
	}
	return g, diff.Compare(byClass(sc, g.Result), byClass(sc, b))
}

// The transcribed upstream cases: genuine against each expectation, and
// berth against genuine.
func TestCases(t *testing.T) {
	all, err := cases.All()
	if err != nil {
		t.Fatal(err)
	}
	regs, err := regressions.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(all, regs...) {
		g, d := compare(t, &c.Scenario)
		if exp := diff.Compare(byClass(&c.Scenario, &c.Expect), byClass(&c.Scenario, g.Result)); len(exp) > 0 {
			t.Errorf("%s: genuine differs from the case's expectation:\n  %s", c.File, strings.Join(exp, "\n  "))
		}
		switch {
		case g.Tie:
			t.Logf("%s: expander tie, not compared", c.File)
		case len(d) > 0:
			t.Errorf("%s: berth differs from genuine:\n  %s", c.File, strings.Join(d, "\n  "))
		}
	}
}

// Generated scenarios, seeds GENUINE_SEEDS ("from-to", default 1-100):
// counts agreements, ties, and disagreements by class (the first field of
// each difference), logging the first seeds of each class.
//
// The genuine answer is not a function of the scenario: the snapshot lists
// its nodes from a Go map, and the pod-list processor that sets aside pods
// fitting existing or upcoming nodes takes the first node that fits in
// that order (resuming after the last match), so which pods are set aside
// varies run to run; the pod equivalence groups come out of a map too. So
// each seed runs the genuine autoscaler GENUINE_RUNS times (default 5):
// berth agrees when its answer equals any of them, and the seeds whose
// genuine answers differed among themselves are counted.
func TestGenerated(t *testing.T) {
	from, to := seeds(t)
	runs := 5
	if v := os.Getenv("GENUINE_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("GENUINE_RUNS=%q: want a positive count", v)
		}
		runs = n
	}
	agree, ties, varied, variedAgree := 0, 0, 0, 0
	classes := map[string][]uint64{}
	examples := map[string]string{}
	for s := from; s <= to; s++ {
		sc := generator.Small(s)
		tie, matched := false, false
		var first []string
		var answers []*scenario.Result
		for r := 0; r < runs; r++ {
			g, d := compare(t, sc)
			if inv := diff.Invariants(sc, g.Result); len(inv) > 0 {
				t.Errorf("seed %d: genuine breaks an invariant: %v", s, inv)
			}
			answers = distinct(answers, byClass(sc, g.Result))
			if r == 0 {
				first = d
			}
			tie = tie || g.Tie
			matched = matched || len(d) == 0
		}
		if len(answers) > 1 {
			varied++
		}
		switch {
		case tie:
			ties++
		case matched:
			agree++
			if len(answers) > 1 {
				variedAgree++
			}
		default:
			d := first
			cls := class(d)
			classes[cls] = append(classes[cls], s)
			if _, ok := examples[cls]; !ok {
				examples[cls] = strings.Join(d, "\n    ")
			}
		}
	}
	t.Logf("%d genuine runs a seed; genuine's answer varied on %d seeds (berth matched one of them on %d)", runs, varied, variedAgree)
	n := int(to - from + 1)
	t.Logf("seeds %d-%d: %d scenarios, %d agree, %d expander ties (not comparable), %d disagree",
		from, to, n, agree, ties, n-agree-ties)
	var keys []string
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		l := classes[k]
		t.Errorf("class %q: %d seeds, first %v\n    %s", k, len(l), l[:min(len(l), 8)], examples[k])
	}
}

// distinct adds r to answers unless diff.Compare finds it equal to one
// already there.
func distinct(answers []*scenario.Result, r *scenario.Result) []*scenario.Result {
	for _, a := range answers {
		if len(diff.Compare(a, r)) == 0 {
			return answers
		}
	}
	return append(answers, r)
}

func class(d []string) string {
	var parts []string
	for _, s := range d {
		f := s
		if i := strings.IndexAny(s, ": "); i > 0 {
			f = s[:i]
		}
		parts = append(parts, f)
	}
	sort.Strings(parts)
	return strings.Join(slicesCompact(parts), "+")
}

func slicesCompact(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func seeds(t *testing.T) (uint64, uint64) {
	v := os.Getenv("GENUINE_SEEDS")
	if v == "" {
		return 1, 100
	}
	a, b, ok := strings.Cut(v, "-")
	if !ok {
		b = a
	}
	from, err1 := strconv.ParseUint(a, 10, 64)
	to, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil || to < from {
		t.Fatalf("GENUINE_SEEDS=%q: want from-to", v)
	}
	return from, to
}

// One scale-up decision on the benchmark shape (50 groups, 5,000 pending
// pods), genuine and berth side by side.
func BenchmarkGenuineScaleUp(b *testing.B) {
	sc := generator.Generate(1, generator.Bench)
	for b.Loop() {
		if _, err := Run(sc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBerthScaleUp(b *testing.B) {
	sc := generator.Generate(1, generator.Bench)
	for b.Loop() {
		if _, err := berthrun.Run(sc); err != nil {
			b.Fatal(err)
		}
	}
}
