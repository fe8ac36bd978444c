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
	for _, c := range all {
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
func TestGenerated(t *testing.T) {
	from, to := seeds(t)
	agree, ties := 0, 0
	classes := map[string][]uint64{}
	examples := map[string]string{}
	for s := from; s <= to; s++ {
		sc := generator.Small(s)
		g, d := compare(t, sc)
		if inv := diff.Invariants(sc, g.Result); len(inv) > 0 {
			t.Errorf("seed %d: genuine breaks an invariant: %v", s, inv)
		}
		switch {
		case g.Tie:
			ties++
		case len(d) == 0:
			agree++
		default:
			cls := class(d)
			classes[cls] = append(classes[cls], s)
			if _, ok := examples[cls]; !ok {
				examples[cls] = strings.Join(d, "\n    ")
			}
		}
	}
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
