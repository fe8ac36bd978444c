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
	var out []Outcome
	var keys [][]byte
	for range n {
		res, err := Run(sc)
		if err != nil {
			return nil, err
		}
		key, err := scenario.Marshal(res)
		if err != nil {
			return nil, err
		}
		found := false
		for i, k := range keys {
			if bytes.Equal(k, key) {
				out[i].Runs++
				found = true
				break
			}
		}
		if !found {
			keys = append(keys, key)
			out = append(out, Outcome{Result: res, Runs: 1})
		}
	}
	// Stable insertion sort by descending runs keeps first-seen order on ties.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Runs > out[j-1].Runs; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}
