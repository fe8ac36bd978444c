package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// markdown renders one line per file. With several runs a cell shows the
// range (min–max); the ratio's range pairs berth's slowest run with
// upstream's fastest and the other way round.
func markdown(rows []row) string {
	var b strings.Builder
	b.WriteString("| file | pods | berth wall s | berth pods/s | upstream pods/s | ratio | berth CPU s | upstream loop CPU s | berth peak RSS MiB | scheduled berth / upstream |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		walls, cpus, rss, brates := spanOf(), spanOf(), spanOf(), spanOf()
		for _, x := range r.berth {
			walls.add(x.Wall.Seconds())
			cpus.add(x.CPU.Seconds())
			rss.add(float64(x.PeakRSS) / (1 << 20))
			brates.add(rate(r.pods, x.Wall))
		}
		upRate, ratio, upSched, upCPU := "—", "—", "—", "—"
		if len(r.upstream) > 0 {
			urates, ucpus, usched := spanOf(), spanOf(), spanOf()
			for _, x := range r.upstream {
				urates.add(rate(r.pods, x.Cycle))
				ucpus.add(x.CPU.Seconds())
				usched.add(float64(x.Scheduled))
			}
			upCPU = ucpus.format("%.2f")
			upRate = urates.format("%.0f")
			lo, hi := brates.min/urates.max, brates.max/urates.min
			ratio = spanOf(lo, hi).format("%.1f×")
			upSched = usched.format("%.0f")
		} else if r.skipped != "" {
			upRate = "skipped"
		}
		bsched := spanOf()
		for _, x := range r.berth {
			bsched.add(float64(x.Scheduled))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s / %s |\n", r.name, r.pods,
			walls.format("%.2f"), brates.format("%.0f"), upRate, ratio, cpus.format("%.2f"), upCPU, rss.format("%.0f"),
			bsched.format("%.0f"), upSched)
	}
	var notes []string
	for _, r := range rows {
		if r.skipped != "" {
			notes = append(notes, fmt.Sprintf("upstream did not run on %s (%s)", r.name, r.skipped))
		}
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "; ") + ".\n")
	}
	return b.String()
}

// checkTolerance is how far apart the two sides' counts of bound pods may
// be, as a share of the pods. Upstream breaks score ties at random, so on
// profiles where a placement decides whether later pods fit (affinity,
// preemption) its own runs differ by a few pods; and the harness gives
// each pod one attempt, where berth retries unschedulable pods until the
// cluster settles (600 pods of mixed: 426 bound by berth, 413–418 by
// upstream).
const checkTolerance = 0.05

// checkRows compares the first run of each side: every pod of the file must
// be in berth's state, and the counts of bound pods must be close; how many
// pods went to the same node is shown, not judged (random tie-breaks again).
func checkRows(rows []row) (string, bool) {
	var b strings.Builder
	failed := false
	b.WriteString("Check (first run of each side):\n\n")
	for _, r := range rows {
		br := r.berth[0]
		if len(r.upstream) == 0 {
			fmt.Fprintf(&b, "- %s: berth bound %d of %d pods; upstream did not run.\n", r.name, br.Scheduled, br.Pods)
			continue
		}
		ur := r.upstream[0]
		same, missing := 0, 0
		for pod, node := range ur.Placement {
			bn, ok := br.Placement[pod]
			switch {
			case !ok:
				missing++
			case node != "" && bn == node:
				same++
			}
		}
		verdict := "ok"
		if d := br.Scheduled - ur.Scheduled; missing > 0 || math.Abs(float64(d)) > math.Max(1, checkTolerance*float64(ur.Pods)) {
			verdict, failed = "DIFFERS", true
		}
		fmt.Fprintf(&b, "- %s: %s — berth bound %d (%d pods in its state, %d of the file's missing), upstream %d of %d; %d on the same node.\n",
			r.name, verdict, br.Scheduled, br.Pods, missing, ur.Scheduled, ur.Pods, same)
	}
	return b.String(), failed
}

func rate(pods int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(pods) / d.Seconds()
}

// span is the range of a measurement over runs.
type span struct{ min, max float64 }

func spanOf(xs ...float64) *span {
	s := &span{min: math.Inf(1), max: math.Inf(-1)}
	for _, x := range xs {
		s.add(x)
	}
	return s
}

func (s *span) add(x float64) { s.min, s.max = math.Min(s.min, x), math.Max(s.max, x) }

func (s *span) format(verb string) string {
	lo, hi := fmt.Sprintf(verb, s.min), fmt.Sprintf(verb, s.max)
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}
