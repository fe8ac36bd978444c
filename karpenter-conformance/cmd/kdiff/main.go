// Command kdiff prints genuine Karpenter's provisioning result for one
// generated scenario (or a scenario file) as YAML.
//
//	go run ./cmd/kdiff -seed 7            # result for generator.Small(7)
//	go run ./cmd/kdiff -seed 7 -scenario  # the scenario itself
//	go run ./cmd/kdiff -file x.yaml       # result for a saved scenario
//	go run ./cmd/kdiff -mixed 1000        # generator.Mixed(1000, seed), with timing
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/berth-sim/berth/karpenter-conformance/generator"
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
	"github.com/berth-sim/berth/karpenter-conformance/upstream"
)

func main() {
	seed := flag.Uint64("seed", 1, "generator seed")
	file := flag.String("file", "", "scenario YAML file instead of a generated one")
	mixed := flag.Int("mixed", 0, "generate a Mixed scenario with this many pods instead of Small")
	showScenario := flag.Bool("scenario", false, "print the scenario instead of the result")
	flag.Parse()
	if err := run(*seed, *file, *mixed, *showScenario); err != nil {
		fmt.Fprintln(os.Stderr, "kdiff:", err)
		os.Exit(1)
	}
}

func run(seed uint64, file string, mixed int, showScenario bool) error {
	var sc *scenario.Scenario
	switch {
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if sc, err = scenario.Load(data); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	case mixed > 0:
		sc = generator.Mixed(mixed, seed)
	default:
		sc = generator.Small(seed)
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
