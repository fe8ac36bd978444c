// Command cadiff prints a cluster-autoscaler conformance scenario, its
// expected result, and berth's result and the differences once berth is
// wired into berthrun.
//
//	cadiff -list                 # the cases and their upstream sources
//	cadiff -case scale-up-ok     # a case: scenario and expected result
//	cadiff -seed 7               # generator.Small(7)
//	cadiff -bench                # the 5,000-pod / 50-group benchmark scenario
//	cadiff -file s.yaml          # a scenario file
//	cadiff -case scale-up-ok -berth   # berth's result and the differences
package main

import (
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/ca-conformance/berthrun"
	"github.com/berth-sim/berth/ca-conformance/cases"
	"github.com/berth-sim/berth/ca-conformance/diff"
	"github.com/berth-sim/berth/ca-conformance/generator"
	"github.com/berth-sim/berth/ca-conformance/scenario"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cadiff:", err)
		os.Exit(1)
	}
}

func run() error {
	list := flag.Bool("list", false, "list the cases")
	caseName := flag.String("case", "", "print a case")
	seed := flag.Uint64("seed", 0, "print generator.Small(seed)")
	bench := flag.Bool("bench", false, "print the benchmark scenario")
	file := flag.String("file", "", "read a scenario file")
	berth := flag.Bool("berth", false, "run berth on the scenario; with -case, compare")
	flag.Parse()

	if *list {
		all, err := cases.All()
		if err != nil {
			return err
		}
		for _, c := range all {
			fmt.Printf("%-36s %s\n", c.Scenario.Name, c.Source)
		}
		return nil
	}
	var (
		sc     *scenario.Scenario
		expect *scenario.Result
	)
	switch {
	case *caseName != "":
		c, err := cases.Get(*caseName)
		if err != nil {
			return err
		}
		sc, expect = &c.Scenario, &c.Expect
	case *file != "":
		data, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		if sc, err = scenario.Parse(data); err != nil {
			return err
		}
	case *bench:
		sc = generator.Generate(1, generator.Bench)
	case *seed != 0:
		sc = generator.Small(*seed)
	default:
		flag.Usage()
		return fmt.Errorf("one of -list, -case, -file, -bench, -seed is needed")
	}
	if !*berth {
		out := map[string]any{"scenario": sc}
		if expect != nil {
			out["expect"] = expect
		}
		return printYAML(out)
	}
	got, err := berthrun.Default.Run(sc)
	if err != nil {
		return err
	}
	if err := printYAML(map[string]any{"berth": got}); err != nil {
		return err
	}
	d := diff.Invariants(sc, got)
	if expect != nil {
		d = append(diff.Compare(expect, got), d...)
	}
	for _, line := range d {
		fmt.Println("DIFF", line)
	}
	if len(d) > 0 {
		return fmt.Errorf("%d differences", len(d))
	}
	return nil
}

func printYAML(v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(data)
	return err
}
