package bench

import (
	"fmt"
	"strings"
)

// Markdown renders results as a markdown table, one row per case.
func Markdown(results []Result) string {
	var b strings.Builder
	b.WriteString("| profile | nodes | pods | nodes scored | upstream pods/s | berth pods/s | ratio | agreement | upstream pods/s (harness wall) | scheduled (upstream / berth bulk) |\n")
	b.WriteString("|---|---:|---:|---|---:|---:|---:|---|---:|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %.0f | %.0f | %.1f× | %s | %.0f | %d / %d |\n",
			r.Profile, r.Nodes, r.Pods, r.PercentageString(), r.UpstreamRate(), r.BerthRate(), r.Ratio(),
			r.Agreement(), r.UpstreamWallRate(), r.UpstreamScheduled, r.BerthScheduled)
	}
	return b.String()
}

// Agreement is "agreed/compared (percent)", or "not compared".
func (r Result) Agreement() string {
	if r.Compared == 0 {
		return "not compared"
	}
	return fmt.Sprintf("%d/%d (%.2f%%)", r.Agreed, r.Compared, 100*float64(r.Agreed)/float64(r.Compared))
}

// Disagreements lists the first disagreement of every case that had one.
func Disagreements(results []Result) string {
	var b strings.Builder
	for _, r := range results {
		if r.First != nil {
			fmt.Fprintf(&b, "- %s: %s\n", r.Case, r.First)
		}
	}
	return b.String()
}
