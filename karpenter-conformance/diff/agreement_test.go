package diff

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-sim/berth/karpenter-conformance/berthrun"
	"github.com/berth-sim/berth/karpenter-conformance/generator"
)

var (
	kseeds  = flag.Int("kseeds", 100, "generator.Small seeds TestAgreement runs (kfrom..N)")
	kfrom   = flag.Int("kfrom", 1, "first seed TestAgreement runs")
	kruns   = flag.Int("kruns", 3, "upstream runs every scenario gets")
	ksettle = flag.Int("ksettle", 30, "upstream runs after which a single outcome other than berth's is a real disagreement")
	kmax    = flag.Int("kmax", 200, "most upstream runs spent looking for berth's outcome while upstream varies")
	kreport = flag.String("kreport", "", "write one line per seed (runs, distinct outcomes, runs with berth's outcome, verdict) to this file")
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	berthrun.Stop()
	os.Exit(code)
}

type seedResult struct {
	seed    uint64
	check   Check
	summary Summary
	err     error
}

// TestAgreement runs berth and genuine Karpenter on generator.Small(kfrom..kseeds)
// and requires berth's result to be one genuine Karpenter produces, sampled
// adaptively (Sampling): kruns runs each, doubled up to kmax while berth's
// outcome has not shown, stopped at ksettle when upstream gives one outcome
// every run. It fails on a real disagreement (upstream settled on another
// outcome) and on a varying upstream whose kmax runs never gave berth's.
func TestAgreement(t *testing.T) {
	start := time.Now()
	policy := Sampling{Initial: *kruns, Settle: *ksettle, Budget: *kmax}
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
				r := checkSeed(policy, seed)
				results[seed-first] = r
				if r.err == nil && r.check.Runs > policy.Initial {
					// Streamed under -v while the run goes on.
					t.Logf("seed %d: %s", seed, describe(r.check))
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
	var agree, extra, varied, maxDistinct, runs int
	var report strings.Builder
	for _, r := range results {
		if r.err != nil {
			t.Fatalf("seed %d: %v", r.seed, r.err)
		}
		c := r.check
		total.NodeClaims += r.summary.NodeClaims
		total.NodeClaimsAgree += r.summary.NodeClaimsAgree
		total.Pods += r.summary.Pods
		total.PodsAgree += r.summary.PodsAgree
		runs += c.Runs
		if c.Distinct > 1 {
			varied++
		}
		maxDistinct = max(maxDistinct, c.Distinct)
		fmt.Fprintf(&report, "%d\t%d\t%d\t%d\t%s\n", r.seed, c.Runs, c.Distinct, c.BerthRuns, verdictWord(c))
		switch {
		case c.Agree:
			agree++
			if c.Runs > policy.Initial {
				extra++
			}
		case c.Real():
			t.Errorf("seed %d: REAL disagreement (upstream gave one outcome in all %d runs): %s\n  reproduce: go run ./cmd/kdiff -seed %d -diff 30",
				r.seed, c.Runs, c.First, r.seed)
		default:
			t.Errorf("seed %d: berth's outcome not among upstream's %d distinct outcomes in %d runs (closest %d): %s\n  reproduce: go run ./cmd/kdiff -seed %d -outcomes %d",
				r.seed, c.Distinct, c.Runs, c.Outcome, c.First, r.seed, c.Runs)
		}
	}
	if *kreport != "" {
		header := "# seed\tupstream runs\tdistinct outcomes\truns with berth's outcome\tverdict\n"
		if err := os.WriteFile(*kreport, []byte(header+report.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Logf("agreement: %d/%d scenarios (%d needed more than %d upstream runs); %d with 2+ distinct upstream outcomes (at most %d); %d upstream runs; %d/%d NodeClaims, %d/%d pods; %s",
		agree, len(results), extra, policy.Initial, varied, maxDistinct, runs,
		total.NodeClaimsAgree, total.NodeClaims, total.PodsAgree, total.Pods, time.Since(start).Round(time.Millisecond))
}

// checkSeed compares berth with upstream's adaptively sampled outcomes for
// one seed. The summary counts against the matched outcome, else the
// closest one.
func checkSeed(policy Sampling, seed uint64) seedResult {
	sc := generator.Small(seed)
	r := seedResult{seed: seed}
	b, err := berthrun.Run(sc)
	if err != nil {
		r.err = err
		return r
	}
	if r.check, err = policy.Check(sc, b); err != nil {
		r.err = err
		return r
	}
	r.summary = Summarize(b, r.check.Outcomes[max(r.check.Outcome, 0)].Result)
	return r
}

func describe(c Check) string {
	return fmt.Sprintf("%s after %d upstream runs; %d distinct outcomes; berth's in %d runs", verdictWord(c), c.Runs, c.Distinct, c.BerthRuns)
}

func verdictWord(c Check) string {
	switch {
	case c.Agree:
		return "agree"
	case c.Real():
		return "disagree"
	default:
		return "not-found"
	}
}
