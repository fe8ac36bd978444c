// Command sidebyside schedules the generator's benchmark profiles with the
// genuine kube-scheduler and with berth, times each alone, checks that their
// decisions agree, and prints a markdown table of pods/s, ratio and
// agreement (see package bench for how each side is measured).
//
// Full run (every profile at 5,000 nodes / 10,000 pods with the adaptive
// percentage, then at 500 nodes / 5,000 pods with percentageOfNodesToScore
// 100; over an hour on 2 CPUs, most of it in the comparison pass):
//
//	cd conformance && go run ./cmd/sidebyside -out sidebyside.md -cpuprofile /tmp/berth-prof
//
// Shorter runs: -profiles basic,mixed, -pods 2000 (about 12 minutes for all
// profiles and both sets on 2 CPUs), -exact-pods 0 (skip the 100% set),
// -compare=false (timings only).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/berth-sim/berth/conformance/bench"
	"github.com/berth-sim/berth/conformance/generator"
)

func main() {
	profiles := flag.String("profiles", strings.Join(generator.Profiles, ","), "comma-separated profiles")
	nodes := flag.Int("nodes", 5000, "nodes of the adaptive-percentage set")
	pods := flag.Int("pods", 10000, "pending pods of the adaptive-percentage set (0 skips it)")
	exactNodes := flag.Int("exact-nodes", 500, "nodes of the percentageOfNodesToScore=100 set")
	exactPods := flag.Int("exact-pods", 5000, "pending pods of the percentageOfNodesToScore=100 set (0 skips it)")
	seed := flag.Uint64("seed", 1, "generator seed")
	compare := flag.Bool("compare", true, "run the un-timed comparison pass")
	cpuDir := flag.String("cpuprofile", "", "directory for CPU profiles of berth's timed Sync, one file per case")
	out := flag.String("out", "", "also write the markdown report to this file")
	flag.Parse()

	var cases []bench.Case
	for _, set := range []struct {
		nodes, pods int
		pct         int32
	}{{*nodes, *pods, 0}, {*exactNodes, *exactPods, 100}} {
		if set.pods == 0 || set.nodes == 0 {
			continue
		}
		for _, p := range strings.Split(*profiles, ",") {
			cases = append(cases, bench.Case{Profile: strings.TrimSpace(p), Nodes: set.nodes, Pods: set.pods, Percentage: set.pct, Seed: *seed})
		}
	}
	if *cpuDir != "" {
		if err := os.MkdirAll(*cpuDir, 0o755); err != nil {
			fail(err)
		}
	}

	loadBefore := bench.LoadAverage()
	start := time.Now()
	var results []bench.Result
	for _, c := range cases {
		opt := bench.Options{SkipCompare: !*compare, Log: os.Stderr}
		if *cpuDir != "" {
			opt.CPUProfile = filepath.Join(*cpuDir, fmt.Sprintf("berth-%s-%d-%s.pprof", c.Profile, c.Nodes, strings.TrimSuffix(c.PercentageString(), "%")))
		}
		r, err := bench.Run(c, opt)
		if err != nil {
			fail(fmt.Errorf("%s: %w", c, err))
		}
		results = append(results, r)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Command: `go run ./cmd/sidebyside %s` (seed %d), %s, GOMAXPROCS %d, %d CPUs, took %s.\n",
		strings.Join(os.Args[1:], " "), *seed, runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU(), time.Since(start).Round(time.Second))
	fmt.Fprintf(&b, "Load average (1, 5, 15 min): before %s, after %s.\n\n", loadBefore, bench.LoadAverage())
	b.WriteString(bench.Markdown(results))
	if d := bench.Disagreements(results); d != "" {
		b.WriteString("\nFirst disagreement per case:\n\n" + d)
	}
	fmt.Print(b.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sidebyside:", err)
	os.Exit(1)
}
