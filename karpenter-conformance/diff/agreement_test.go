package diff

import (
	"flag"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/berth-sim/berth/karpenter-conformance/berthrun"
	"github.com/berth-sim/berth/karpenter-conformance/generator"
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
	"github.com/berth-sim/berth/karpenter-conformance/upstream"
)

var (
	kseeds = flag.Int("kseeds", 100, "generator.Small seeds TestAgreement runs (kfrom..N)")
	kfrom  = flag.Int("kfrom", 1, "first seed TestAgreement runs")
	kruns  = flag.Int("kruns", 3, "upstream runs per scenario (distinct outcomes are sampled)")
	kmore  = flag.Int("kmore", 30, "upstream runs to add before calling an unknown disagreement new")
)

// Causes of the known disagreements (one regression file per class in
// ../regressions).
const (
	// Not a difference: berth's result is one upstream produces, but rarely
	// enough that kmore runs may miss it.
	causeSampling = "sampling: berth's outcome is upstream-possible but rare among many tie outcomes"
)

// known are the seeds (1..1000 checked) where berth is not among upstream's
// sampled outcomes, with the cause. TestAgreement logs them and fails only on
// new ones. Seeds 10, 65 and 84, once listed as sampling, now match upstream's
// most frequent outcome (10-14 of 60 runs). 554 and 747 are tie-rich (42 and
// 9+ distinct upstream outcomes): berth's result is upstream's most frequent
// one, but at 4 of 60 and 2 of 10 runs a 3+30-run sample can miss it.
// Seed 519 (zone spread + zone self-affinity, a spread tie after the
// PreferNoSchedule relaxation) was fixed: regressions/spread-tie-settled-by-zone-affinity.yaml.
var known = map[uint64]string{
	554: causeSampling,
	747: causeSampling,
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	berthrun.Stop()
	os.Exit(code)
}

type seedResult struct {
	seed    uint64
	verdict Verdict
	summary Summary
	runs    int
	err     error
}

// TestAgreement runs berth and genuine Karpenter on generator.Small(1..kseeds)
// and requires berth's result to be one of upstream's sampled outcomes: kruns
// runs, and kmore more before an unknown disagreement counts as new.
func TestAgreement(t *testing.T) {
	start := time.Now()
	seeds := make(chan uint64)
	first := uint64(max(*kfrom, 1))
	if uint64(*kseeds) < first {
		t.Skipf("no seeds in %d..%d", first, *kseeds)
	}
	results := make([]seedResult, uint64(*kseeds)-first+1)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				r := checkSeed(seed)
				results[seed-first] = r
				if r.err == nil && !r.verdict.Agree {
					// Streamed under -v while the run goes on.
					t.Logf("seed %d: disagrees over %d runs", seed, r.runs)
				}
			}
		}()
	}
	for seed := first; seed <= uint64(*kseeds); seed++ {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()

	var total Summary
	agree := 0
	var fixed []uint64
	for _, r := range results {
		if r.err != nil {
			t.Fatalf("seed %d: %v", r.seed, r.err)
		}
		total.NodeClaims += r.summary.NodeClaims
		total.NodeClaimsAgree += r.summary.NodeClaimsAgree
		total.Pods += r.summary.Pods
		total.PodsAgree += r.summary.PodsAgree
		cause, isKnown := known[r.seed]
		switch {
		case r.verdict.Agree:
			agree++
			if isKnown && cause != causeSampling {
				fixed = append(fixed, r.seed)
			}
		case isKnown:
			t.Logf("seed %d: known disagreement (%s): %s", r.seed, cause, r.verdict.First)
		default:
			t.Errorf("seed %d: NEW disagreement (closest of upstream's outcomes over %d runs: %d): %s\n  reproduce: go run ./cmd/kdiff -seed %d -diff 30",
				r.seed, r.runs, r.verdict.Outcome, r.verdict.First, r.seed)
		}
	}
	if len(fixed) > 0 {
		t.Logf("known disagreements that now agree (remove them from known): %v", fixed)
	}
	t.Logf("agreement: %d/%d scenarios, %d/%d NodeClaims, %d/%d pods; %s",
		agree, len(results), total.NodeClaimsAgree, total.NodeClaims, total.PodsAgree, total.Pods, time.Since(start).Round(time.Millisecond))
}

// checkSeed compares berth with upstream's sampled outcomes for one seed;
// an unknown disagreement gets kmore upstream runs first. The summary
// counts against the matched outcome, else the closest one.
func checkSeed(seed uint64) seedResult {
	sc := generator.Small(seed)
	r := seedResult{seed: seed}
	b, err := berthrun.Run(sc)
	if err != nil {
		r.err = err
		return r
	}
	var outs []*scenario.Result
	sample := func(n int) {
		more, err := upstream.Outcomes(sc, n)
		if err != nil {
			r.err = err
			return
		}
		r.runs += n
		for _, o := range more {
			outs = append(outs, o.Result)
		}
		r.verdict = Compare(b, outs)
	}
	sample(*kruns)
	if r.err == nil && !r.verdict.Agree {
		if _, isKnown := known[seed]; !isKnown && *kmore > 0 {
			sample(*kmore)
		}
	}
	if r.err == nil {
		r.summary = Summarize(b, outs[max(r.verdict.Outcome, 0)])
	}
	return r
}
