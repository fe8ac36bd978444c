// Command kdump prints berth's provisioning results for a range of generated
// scenarios, one YAML document each, so that two versions of berth can be
// compared byte for byte (a speed change must not change any answer):
//
//	go run ./cmd/kdump > before.yaml
//	... change berth ...
//	go run ./cmd/kdump > after.yaml && cmp before.yaml after.yaml
//
// By default: generator.Small seeds 1-400, then generator.Mixed batches of
// 1,000 and 3,000 pods for seeds 1-3 and 10,000 pods for seed 1. Both the
// Solve split and provisioner.Decide are dumped for the small seeds.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/berth-sim/berth/karpenter-conformance/berthrun"
	"github.com/berth-sim/berth/karpenter-conformance/generator"
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
)

func main() {
	seeds := flag.Uint64("seeds", 400, "generator.Small seeds 1..N")
	mixed := flag.String("mixed", "1000:1-3,3000:1-3,10000:1", "Mixed batches as PODS:SEEDS (SEEDS a number or FROM-TO), comma-separated")
	flag.Parse()
	defer berthrun.Stop()
	if err := run(*seeds, *mixed); err != nil {
		fmt.Fprintln(os.Stderr, "kdump:", err)
		os.Exit(1)
	}
}

func run(seeds uint64, mixed string) error {
	for s := uint64(1); s <= seeds; s++ {
		sc := generator.Small(s)
		res, err := berthrun.Run(sc)
		if err != nil {
			return err
		}
		if err := dump(sc.Name+" solve", res); err != nil {
			return err
		}
		if res, err = berthrun.Decide(sc); err != nil {
			return err
		}
		if err := dump(sc.Name+" decide", res); err != nil {
			return err
		}
	}
	for _, batch := range strings.Split(mixed, ",") {
		if batch = strings.TrimSpace(batch); batch == "" {
			continue
		}
		podsText, seedText, ok := strings.Cut(batch, ":")
		n, err := strconv.Atoi(podsText)
		if !ok || err != nil {
			return fmt.Errorf("bad -mixed entry %q", batch)
		}
		from, to, err := seedRange(seedText)
		if err != nil {
			return fmt.Errorf("bad -mixed entry %q: %w", batch, err)
		}
		for s := from; s <= to; s++ {
			sc := generator.Mixed(n, s)
			res, err := berthrun.Run(sc)
			if err != nil {
				return err
			}
			if err := dump(sc.Name, res); err != nil {
				return err
			}
		}
	}
	return nil
}

func seedRange(text string) (from, to uint64, err error) {
	a, b, isRange := strings.Cut(text, "-")
	if from, err = strconv.ParseUint(a, 10, 64); err != nil {
		return 0, 0, err
	}
	if !isRange {
		return from, from, nil
	}
	to, err = strconv.ParseUint(b, 10, 64)
	return from, to, err
}

func dump(name string, res *scenario.Result) error {
	out, err := scenario.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Printf("--- # %s\n", name)
	_, err = os.Stdout.Write(out)
	return err
}
