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

// sample is one genuine run of sc with its random choices steered to
// berth's answer b: its expander pick and its balancing split, when the
// genuine chain or balancer has them among its choices (Pick, README
// "Ties"). Each outcome is an answer the shipped autoscaler gives with
// some roll of its dice.
func sample(t *testing.T, sc *scenario.Scenario, b *scenario.Result) *Outcome {
	t.Helper()
	g, err := RunPick(sc, pickOf(b))
	if err != nil {
		t.Fatalf("%s: genuine: %v", sc.Name, err)
	}
	return g
}

// pickOf is the Pick that steers the genuine run towards r.
func pickOf(r *scenario.Result) Pick {
	p := Pick{Group: r.Chosen}
	for _, m := range r.TriggeredScaleUp {
		p.Split = strings.TrimPrefix(m, "pod triggered scale-up: ")
		break
	}
	return p
}

// chance reports whether o's answer was one of several chance could give.
func chance(o *Outcome) bool { return o.Tie || o.BalanceAlternatives > 1 }

func groups(os []scenario.Option) []string {
	var out []string
	for _, o := range os {
		out = append(out, o.Group)
	}
	return out
}

// The transcribed upstream cases: genuine against each expectation, and
// berth against genuine. With a tie the genuine pick is steered to berth's,
// and the expectation must hold for that pick too.
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
		sc := &c.Scenario
		b, err := berthrun.Run(sc)
		if err != nil {
			t.Errorf("%s: berth: %v", c.File, err)
			continue
		}
		g := sample(t, sc, b)
		if d := diff.Compare(byClass(sc, &c.Expect), byClass(sc, g.Result)); len(d) > 0 {
			t.Errorf("%s: genuine differs from the case's expectation:\n  %s", c.File, strings.Join(d, "\n  "))
		}
		d := diff.Compare(byClass(sc, g.Result), byClass(sc, b))
		if len(d) > 0 {
			t.Errorf("%s: berth differs from genuine:\n  %s", c.File, strings.Join(d, "\n  "))
		}
		if chance(g) {
			t.Logf("%s: chance decides (expander tie among %v, %d balancing splits); berth agrees: %v",
				c.File, groups(g.TieOptions), g.BalanceAlternatives, len(d) == 0)
		}
	}
}

// Generated scenarios, seeds GENUINE_SEEDS ("from-to", default 1-100).
//
// The genuine answer is not a function of the scenario, for three
// reasons: the expander chain can end in a tie settled at random; the
// split between similar groups of equal size follows a map order; and the
// pod-list processor that sets aside pods fitting existing or upcoming
// nodes walks the snapshot's nodes in map order, so which pods it sets
// aside — and what the estimator is left with — varies run to run (the
// pod equivalence groups come out of a map too). The first two are
// choices this runner makes explicitly, steered to berth's pick when the
// genuine autoscaler has it among its choices (sample). The third is
// sampled: GENUINE_RUNS samples a seed (default 5); when berth's answer is
// not among them, at least 100 samples are run, so that how often berth's
// answer comes up can be told, and more until it does, up to
// GENUINE_MAX_RUNS (default 300). berth agrees when its answer equals
// some genuine answer. A seed where no sample gives berth's answer
// is a disagreement; "constant" when every genuine answer was the same
// (a real disagreement), "varied" otherwise.
func TestGenerated(t *testing.T) {
	from, to := seeds(t)
	runs, maxRuns := envCount(t, "GENUINE_RUNS", 5), envCount(t, "GENUINE_MAX_RUNS", 300)
	full := min(100, maxRuns) // samples counted once five are not enough
	agree, tieAgree, extra, varied, variedAgree := 0, 0, 0, 0, 0
	classes := map[string][]uint64{}
	examples := map[string]string{}
	for s := from; s <= to; s++ {
		sc := generator.Small(s)
		b, err := berthrun.Run(sc)
		if err != nil {
			t.Errorf("seed %d: berth: %v", s, err)
			continue
		}
		bc := byClass(sc, b)
		var answers []*scenario.Result
		var closest []string
		hits, viaChance, n := 0, false, 0
		for n < runs || (hits == 0 && n < maxRuns) || (n > runs && n < full) {
			n++
			g := sample(t, sc, b)
			if inv := diff.Invariants(sc, g.Result); len(inv) > 0 {
				t.Errorf("seed %d: genuine breaks an invariant: %v", s, inv)
			}
			gc := byClass(sc, g.Result)
			answers = distinct(answers, gc)
			d := diff.Compare(gc, bc)
			if len(d) == 0 {
				hits++
				viaChance = viaChance || chance(g)
			} else if closest == nil || len(d) < len(closest) {
				closest = d
			}
		}
		if len(answers) > 1 {
			varied++
		}
		if n > runs {
			extra++
			t.Logf("seed %d: %d samples, %d distinct genuine answers, berth's in %d", s, n, len(answers), hits)
		}
		if hits == 0 {
			kind := "constant"
			if len(answers) > 1 {
				kind = "varied"
			}
			cls := kind + " " + class(closest)
			classes[cls] = append(classes[cls], s)
			if _, ok := examples[cls]; !ok {
				examples[cls] = strings.Join(closest, "\n    ")
			}
			continue
		}
		agree++
		if viaChance {
			tieAgree++
		}
		if len(answers) > 1 {
			variedAgree++
		}
	}
	n := int(to - from + 1)
	t.Logf("%d samples a seed; when berth's answer is not among them, %d, and up to %d until it is", runs, full, maxRuns)
	t.Logf("genuine's answer varied on %d seeds (berth matched one of them on %d)", varied, variedAgree)
	t.Logf("seeds %d-%d: %d scenarios, %d agree (%d of them on a pick chance made: expander or balancing tie; %d needed extra samples), %d disagree",
		from, to, n, agree, tieAgree, extra, n-agree)
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

func envCount(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
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
