package diff

import (
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
	"github.com/berth-sim/berth/karpenter-conformance/upstream"
)

// Sampling is the adaptive sampling policy of the agreement check.
//
// Genuine Karpenter's result is not a function of the scenario: where
// domains or instance types tie it picks by Go map walk, so one scenario has
// a set of possible outcomes with unequal frequencies. The question the
// check answers is whether berth's result is one of them, so a miss in a few
// runs proves nothing while upstream itself is still varying. Every scenario
// gets Initial runs; while berth's result is not among the outcomes seen,
// the sample doubles, up to Budget runs. A scenario whose upstream runs are
// all identical after Settle runs is taken as deterministic there: berth's
// different result is a real disagreement and sampling stops.
type Sampling struct {
	Initial int // runs every scenario gets
	Settle  int // runs after which a single upstream outcome counts as settled
	Budget  int // most runs spent looking for berth's outcome
}

// Check is the adaptive verdict for one scenario.
type Check struct {
	Verdict
	// Runs is the number of upstream runs sampled.
	Runs int
	// Distinct is the number of distinct upstream outcomes among them (a
	// lower bound: a scenario that agreed early was sampled little).
	Distinct int
	// BerthRuns is how many of those runs produced berth's outcome.
	BerthRuns int
	// Outcomes are the distinct upstream outcomes, most frequent first.
	Outcomes []upstream.Outcome
}

// Real reports a disagreement with an upstream that gave one outcome every
// run: a difference in berth, not a sampling question.
func (c Check) Real() bool { return !c.Agree && c.Distinct == 1 }

// Check samples upstream on the scenario until berth's result b is among its
// outcomes, the sample settles on one other outcome, or the budget is spent.
func (p Sampling) Check(sc *scenario.Scenario, b *scenario.Result) (Check, error) {
	var s upstream.Sample
	want := max(p.Initial, 1)
	for {
		if err := s.Add(sc, want-s.Runs); err != nil {
			return Check{}, err
		}
		outs := s.Outcomes()
		results := make([]*scenario.Result, len(outs))
		for i, o := range outs {
			results[i] = o.Result
		}
		c := Check{Verdict: Compare(b, results), Runs: s.Runs, Distinct: len(outs), Outcomes: outs}
		if c.Agree || s.Runs >= p.Budget || (len(outs) == 1 && s.Runs >= p.Settle) {
			for i, m := range Matches(b, results) {
				if m {
					c.BerthRuns += outs[i].Runs
				}
			}
			return c, nil
		}
		want = p.next(s.Runs)
	}
}

// next is the sample size after runs: double, stopping at Settle on the way
// (where a single-outcome scenario is decided) and at Budget.
func (p Sampling) next(runs int) int {
	n := 2 * runs
	if runs < p.Settle && n > p.Settle {
		n = p.Settle
	}
	return max(min(n, p.Budget), runs+1)
}
