// Command kdiff prints genuine Karpenter's provisioning result for one
// generated scenario (or a scenario file) as YAML.
//
//	go run ./cmd/kdiff -seed 7            # result for generator.Small(7)
//	go run ./cmd/kdiff -seed 7 -scenario  # the scenario itself
//	go run ./cmd/kdiff -file x.yaml       # result for a saved scenario
//	go run ./cmd/kdiff -mixed 1000        # generator.Mixed(1000, seed), with timing
//	go run ./cmd/kdiff -seed 7 -berth     # berth's result instead of upstream's
//	go run ./cmd/kdiff -seed 7 -diff 5    # berth vs 5 upstream runs: verdict and first difference
//	go run ./cmd/kdiff -seed 7 -outcomes 60  # upstream's distinct outcomes with frequencies, berth's marked
//	go run ./cmd/kdiff -seed 7 -check     # TestAgreement's adaptive check on one scenario
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/berth-sim/berth/karpenter-conformance/berthrun"
	"github.com/berth-sim/berth/karpenter-conformance/diff"
	"github.com/berth-sim/berth/karpenter-conformance/generator"
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
	"github.com/berth-sim/berth/karpenter-conformance/upstream"
)

func main() {
	seed := flag.Uint64("seed", 1, "generator seed")
	file := flag.String("file", "", "scenario YAML file instead of a generated one")
	mixed := flag.Int("mixed", 0, "generate a Mixed scenario with this many pods instead of Small")
	showScenario := flag.Bool("scenario", false, "print the scenario instead of the result")
	berth := flag.Bool("berth", false, "print berth's result instead of upstream's")
	diffRuns := flag.Int("diff", 0, "compare berth with this many upstream runs and print the verdict")
	outcomeRuns := flag.Int("outcomes", 0, "run upstream this many times and print each distinct outcome's frequency, marking berth's")
	check := flag.Bool("check", false, "run TestAgreement's adaptive check (3 runs, doubled up to 200 while berth's outcome has not shown, settled at 30)")
	flag.Parse()
	defer berthrun.Stop()
	var err error
	switch {
	case *check:
		err = runCheck(*seed, *file, *mixed)
	case *outcomeRuns > 0:
		err = printOutcomes(*seed, *file, *mixed, *outcomeRuns)
	case *berth || *diffRuns > 0:
		err = runBerth(*seed, *file, *mixed, *diffRuns)
	default:
		err = run(*seed, *file, *mixed, *showScenario)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kdiff:", err)
		os.Exit(1)
	}
}

func load(seed uint64, file string, mixed int) (*scenario.Scenario, error) {
	var sc *scenario.Scenario
	switch {
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		if sc, err = scenario.Load(data); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	case mixed > 0:
		sc = generator.Mixed(mixed, seed)
	default:
		sc = generator.Small(seed)
	}
	return sc, nil
}

// runBerth prints berth's result, or with runs > 0 the comparison with
// upstream's outcomes (and, on disagreement, the closest outcome).
func runBerth(seed uint64, file string, mixed, runs int) error {
	sc, err := load(seed, file, mixed)
	if err != nil {
		return err
	}
	res, solve, err := berthrun.RunTimed(sc)
	if err != nil {
		return err
	}
	if runs == 0 {
		out, err := scenario.Marshal(res)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "# %s (berth): %d pods, %d nodeclaims, %d on existing nodes, %d errors; Solve %s\n",
			sc.Name, len(sc.Pods), len(res.NodeClaims), len(res.Existing), len(res.Errors), solve)
		_, err = os.Stdout.Write(out)
		return err
	}
	outs, err := upstream.Outcomes(sc, runs)
	if err != nil {
		return err
	}
	results := make([]*scenario.Result, len(outs))
	for i, o := range outs {
		results[i] = o.Result
	}
	v := diff.Compare(res, results)
	if v.Agree {
		fmt.Printf("%s: agree (upstream outcome %d of %d, seen %d/%d runs)\n", sc.Name, v.Outcome, len(outs), outs[v.Outcome].Runs, runs)
		return nil
	}
	fmt.Printf("%s: DISAGREE (%d upstream outcomes over %d runs); closest outcome %d:\n  %s\n", sc.Name, len(outs), runs, v.Outcome, v.First)
	return nil
}

func run(seed uint64, file string, mixed int, showScenario bool) error {
	sc, err := load(seed, file, mixed)
	if err != nil {
		return err
	}
	if showScenario {
		out, err := scenario.Marshal(sc)
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(out)
		return err
	}
	res, timing, err := upstream.RunTimed(sc)
	if err != nil {
		return err
	}
	out, err := scenario.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "# %s: %d pods, %d nodeclaims, %d on existing nodes, %d errors; Solve %s, whole pass %s\n",
		sc.Name, len(sc.Pods), len(res.NodeClaims), len(res.Existing), len(res.Errors), timing.Solve, timing.Schedule)
	_, err = os.Stdout.Write(out)
	return err
}

// runCheck runs the adaptive agreement check (diff.Sampling, with
// TestAgreement's default policy) on one scenario.
func runCheck(seed uint64, file string, mixed int) error {
	sc, err := load(seed, file, mixed)
	if err != nil {
		return err
	}
	b, err := berthrun.Run(sc)
	if err != nil {
		return err
	}
	c, err := diff.Sampling{Initial: 3, Settle: 30, Budget: 200}.Check(sc, b)
	if err != nil {
		return err
	}
	verdict := "agree"
	switch {
	case c.Agree:
	case c.Real():
		verdict = "REAL DISAGREEMENT"
	default:
		verdict = "berth's outcome not found"
	}
	fmt.Printf("%s: %s after %d upstream runs; %d distinct outcomes; berth's in %d runs\n", sc.Name, verdict, c.Runs, c.Distinct, c.BerthRuns)
	if !c.Agree {
		fmt.Printf("  closest outcome %d: %s\n", c.Outcome, c.First)
	}
	return nil
}
