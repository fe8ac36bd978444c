package upstream

import (
	"bytes"

	"github.com/berth-sim/berth/karpenter-conformance/scenario"
)

// Outcome is one distinct result and how many runs produced it.
type Outcome struct {
	Result *scenario.Result
	Runs   int
}

// Outcomes runs the scenario n times and returns the distinct results, most
// frequent first (first seen on ties).
//
// Genuine Karpenter is not deterministic: TopologyGroup picks among domains
// with equal counts (topology spread, pod affinity and anti-affinity) by
// iterating a Go map or a set's UnsortedList, so zone and hostname choices
// vary between runs of the same input. A berth result is upstream-possible if
// it equals one of the outcomes; a single run only shows one of them.
func Outcomes(sc *scenario.Scenario, n int) ([]Outcome, error) {
	var s Sample
	if err := s.Add(sc, n); err != nil {
		return nil, err
	}
	return s.Outcomes(), nil
}

// Sample accumulates upstream runs of one scenario, so a caller can sample
// in rounds (more runs only while it still needs them) and keep one tally.
type Sample struct {
	// Runs is the number of runs so far.
	Runs int
	outs []Outcome
	keys [][]byte
}

// Add runs the scenario n more times.
func (s *Sample) Add(sc *scenario.Scenario, n int) error {
	for range n {
		res, err := Run(sc)
		if err != nil {
			return err
		}
		// Outcomes that differ only in the map-walk order of an error's
		// requirement clauses are one outcome (scenario.CanonicalError).
		key, err := scenario.Marshal(res.Canonical())
		if err != nil {
			return err
		}
		s.Runs++
		found := false
		for i, k := range s.keys {
			if bytes.Equal(k, key) {
				s.outs[i].Runs++
				found = true
				break
			}
		}
		if !found {
			s.keys = append(s.keys, key)
			s.outs = append(s.outs, Outcome{Result: res, Runs: 1})
		}
	}
	return nil
}

// Outcomes returns the distinct results so far, most frequent first (first
// seen on ties).
func (s *Sample) Outcomes() []Outcome {
	out := append([]Outcome(nil), s.outs...)
	// Stable insertion sort by descending runs keeps first-seen order on ties.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Runs > out[j-1].Runs; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
