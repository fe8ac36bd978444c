// Command ksidebyside times genuine Karpenter's Scheduler.Solve and berth's
// provisioning.Solve on the same generator.Mixed batches and prints a table.
//
//	go run ./cmd/ksidebyside                      # 1,000 and 10,000 pods, seed 1
//	go run ./cmd/ksidebyside -pods 1000 -reps 3   # best of 3
//
// Only the Solve call is timed on each side: upstream's after the whole
// provisioner pass has built its Scheduler (fake-client List calls inside
// Solve included, see README), berth's after provisioner.Prepare. Upstream
// bounds Solve by a one-minute timeout, as Provisioner.Schedule does; a row
// that hits it is marked.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/berth-sim/berth/karpenter-conformance/berthrun"
	"github.com/berth-sim/berth/karpenter-conformance/diff"
	"github.com/berth-sim/berth/karpenter-conformance/generator"
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
	"github.com/berth-sim/berth/karpenter-conformance/upstream"
)

func main() {
	podsFlag := flag.String("pods", "1000,10000", "comma-separated batch sizes")
	seed := flag.Uint64("seed", 1, "generator seed")
	reps := flag.Int("reps", 1, "runs per side; the fastest Solve is reported")
	flag.Parse()
	defer berthrun.Stop()
	if err := run(*podsFlag, *seed, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "ksidebyside:", err)
		os.Exit(1)
	}
}

func run(podsFlag string, seed uint64, reps int) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "pods\tupstream Solve\tberth Solve\tratio\tupstream claims/errors\tberth claims/errors\tsame result\t")
	for _, f := range strings.Split(podsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("bad -pods entry %q", f)
		}
		sc := generator.Mixed(n, seed)
		var up, be *scenario.Result
		var upBest, beBest time.Duration
		for range max(reps, 1) {
			res, timing, err := upstream.RunTimed(sc)
			if err != nil {
				return err
			}
			if up == nil || timing.Solve < upBest {
				upBest = timing.Solve
			}
			up = res
			bres, solve, err := berthrun.RunTimed(sc)
			if err != nil {
				return err
			}
			if be == nil || solve < beBest {
				beBest = solve
			}
			be = bres
		}
		mark := ""
		if upBest >= time.Minute {
			mark = " (timeout)"
		}
		v := diff.Compare(be, []*scenario.Result{up})
		same := "yes"
		if !v.Agree {
			same = "no (one upstream run; topology ties vary)"
		}
		fmt.Fprintf(w, "%d\t%s%s\t%s\t%.1fx\t%d/%d\t%d/%d\t%s\t\n", n, upBest.Round(time.Millisecond), mark, beBest.Round(time.Millisecond),
			float64(upBest)/float64(max(beBest, 1)), len(up.NodeClaims), len(up.Errors), len(be.NodeClaims), len(be.Errors), same)
		w.Flush()
	}
	return w.Flush()
}
