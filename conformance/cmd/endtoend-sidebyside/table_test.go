package main

import (
	"strings"
	"testing"
	"time"
)

func TestSpanFormat(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want string
	}{
		{[]float64{2}, "2.0"},
		{[]float64{2, 2.01}, "2.0"},
		{[]float64{3, 1, 2}, "1.0–3.0"},
	} {
		if got := spanOf(tc.xs...).format("%.1f"); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.xs, got, tc.want)
		}
	}
}

func TestCheckRows(t *testing.T) {
	placed := func(n, bound int) map[string]string {
		m := map[string]string{}
		for i := 0; i < n; i++ {
			node := ""
			if i < bound {
				node = "node-1"
			}
			m[string(rune('a'+i%26))+strings.Repeat("x", i/26)] = node
		}
		return m
	}
	for _, tc := range []struct {
		name                string
		berthPods, berthSet int
		upSet               int
		wantFail            bool
	}{
		{"same", 100, 90, 90, false},
		{"within 5%", 100, 94, 90, false},
		{"too far", 100, 80, 90, true},
		{"a pod of the file missing", 99, 90, 90, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := row{name: "p", pods: 100,
				berth:    []berthRun{{Pods: tc.berthPods, Scheduled: tc.berthSet, Placement: placed(tc.berthPods, tc.berthSet)}},
				upstream: []upstreamRun{{Pods: 100, Scheduled: tc.upSet, Placement: placed(100, tc.upSet)}}}
			out, failed := checkRows([]row{r})
			if failed != tc.wantFail {
				t.Errorf("failed = %v, want %v:\n%s", failed, tc.wantFail, out)
			}
		})
	}
}

func TestMarkdownShowsSkippedUpstream(t *testing.T) {
	r := row{name: "huge", pods: 1000, skipped: "not a generated scenario",
		berth: []berthRun{{Wall: 2 * time.Second, CPU: time.Second, PeakRSS: 1 << 30, Pods: 1000, Scheduled: 1000}}}
	got := markdown([]row{r})
	for _, want := range []string{"| huge | 1000 | 2.00 | 500 | skipped | — | 1.00 | — | 1024 | 1000 / — |", "upstream did not run on huge"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}
