// Command endtoend-sidebyside measures berth end to end, as a user runs it,
// beside the genuine kube-scheduler v1.36 on the same scenario files, and
// prints a markdown table (docs/performance.md says what each side counts):
//
//	cd conformance
//	go run ./cmd/profiles -out /tmp/prof -huge
//	go run ./cmd/endtoend-sidebyside /tmp/prof/{basic,affinity,spread,taints,mixed,huge}.yaml
//
// berth: `berth --state NEW apply -f FILE` in a child process — parse,
// admit, simulate until settled, save — timed by wall clock, with the
// child's CPU time and peak RSS; the pods it bound are then listed with
// `berth get pods -A`. The binary is built from the main module unless
// -berth names one.
//
// upstream: the file read by the conformance generator, its objects loaded
// into an in-process kube-scheduler over a fake API, its pending pods
// scheduled one at a time in file order; only the time inside the
// scheduling cycles counts. Files the harness cannot read (huge.yaml's
// Deployments) are measured on berth's side only.
//
// -runs N repeats each side N times and reports the range; -check compares
// what the two sides scheduled and exits 1 when a pod of the file is missing
// from berth's state or the counts of bound pods differ by more than 5%.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/berth-sim/berth/conformance/bench"
)

// row is one file's measurements, every run of each side.
type row struct {
	name     string
	pods     int // pending pods in the file (berth's count when upstream cannot read it)
	berth    []berthRun
	upstream []upstreamRun
	skipped  string // why upstream did not run
}

func main() {
	berthBin := flag.String("berth", "", "berth binary (default: build ./cmd/berth of the main module)")
	runs := flag.Int("runs", 1, "runs of each side per file")
	check := flag.Bool("check", false, "compare what the two sides scheduled; exit 1 when they differ by more than 5% of the pods")
	withUpstream := flag.Bool("upstream", true, "run the genuine kube-scheduler side")
	out := flag.String("out", "", "also write the report to this file")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: endtoend-sidebyside [flags] FILE...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "berth-e2e-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	bin := *berthBin
	if bin == "" {
		if bin, err = buildBerth(tmp); err != nil {
			fail(err)
		}
	}

	loadBefore := bench.LoadAverage()
	start := time.Now()
	var rows []row
	for _, file := range flag.Args() {
		r, err := measure(bin, file, tmp, *runs, *withUpstream)
		if err != nil {
			fail(err)
		}
		rows = append(rows, r)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Command: `go run ./cmd/endtoend-sidebyside %s` (%d run(s) per side, took %s).\n",
		strings.Join(os.Args[1:], " "), *runs, time.Since(start).Round(time.Second))
	fmt.Fprintf(&b, "Machine: %s, %d CPUs, %s/%s, %s. Load average (1, 5, 15 min): before %s, after %s.\n\n",
		bench.CPUModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), loadBefore, bench.LoadAverage())
	b.WriteString(markdown(rows))
	failed := false
	if *check {
		var c string
		c, failed = checkRows(rows)
		b.WriteString("\n" + c)
	}
	fmt.Print(b.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			fail(err)
		}
	}
	if failed {
		os.Exit(1)
	}
}

// measure runs both sides on one file: berth first, then upstream.
func measure(bin, file, tmp string, runs int, withUpstream bool) (row, error) {
	r := row{name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))}
	for i := 0; i < runs; i++ {
		state := filepath.Join(tmp, fmt.Sprintf("%s-%d", r.name, i))
		res, err := applyFile(bin, file, state)
		if err != nil {
			return r, err
		}
		logf("%s: berth run %d: %.2f s wall, %.2f s CPU, %d MiB peak, %d/%d pods scheduled",
			r.name, i+1, res.Wall.Seconds(), res.CPU.Seconds(), res.PeakRSS>>20, res.Scheduled, res.Pods)
		if i > 0 {
			res.Placement = nil // the first run's is enough for -check
		}
		r.berth = append(r.berth, res)
		// A state of 100,000 pods takes room; only the timing is kept.
		if err := os.RemoveAll(state); err != nil {
			return r, err
		}
	}
	r.pods = r.berth[0].Pods
	if !withUpstream {
		r.skipped = "-upstream=false"
		return r, nil
	}
	for i := 0; i < runs; i++ {
		res, err := scheduleUpstream(file)
		var unreadable errUnreadable
		if errors.As(err, &unreadable) {
			r.skipped = unreadable.Error()
			logf("%s: upstream skipped: %v", r.name, err)
			return r, nil
		}
		if err != nil {
			return r, fmt.Errorf("%s: upstream: %w", file, err)
		}
		logf("%s: upstream run %d: %.2f s in scheduling cycles (%.2f s loop, %.2f s CPU), %d/%d pods scheduled",
			r.name, i+1, res.Cycle.Seconds(), res.Wall.Seconds(), res.CPU.Seconds(), res.Scheduled, res.Pods)
		if i > 0 {
			res.Placement = nil
		}
		r.upstream = append(r.upstream, res)
		runtime.GC()
	}
	r.pods = r.upstream[0].Pods
	return r, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "endtoend-sidebyside: "+format+"\n", args...)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "endtoend-sidebyside:", err)
	os.Exit(1)
}
