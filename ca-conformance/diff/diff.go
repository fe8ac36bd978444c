// Package diff compares an autoscaler's Result with an expected one, field
// by field, the way the upstream expectations are meant: pod lists as sets,
// NotTriggerScaleUp messages as sets of aggregated reasons (CA joins them in
// Go map order, so their order is not part of the answer).
package diff

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// Compare returns one line per difference between want and got; fields
// want leaves nil are not compared. Empty means agreement.
func Compare(want, got *scenario.Result) []string {
	w, g := *want, *got
	var out []string
	if w.ScaleUp != nil {
		ws, gs := slices.Clone(w.ScaleUp), slices.Clone(g.ScaleUp)
		sortChanges(ws)
		sortChanges(gs)
		if !equalChanges(ws, gs) {
			out = append(out, fmt.Sprintf("scale-up: want %s, got %s", changes(ws), changes(gs)))
		}
	}
	if w.Options != nil {
		if d := compareOptions(w.Options, g.Options); d != "" {
			out = append(out, d)
		}
	}
	if w.Chosen != "" && w.Chosen != g.Chosen {
		out = append(out, fmt.Sprintf("chosen: want %s, got %s", w.Chosen, g.Chosen))
	}
	for _, f := range []struct {
		name      string
		want, got []string
	}{
		{"triggered", w.Triggered, g.Triggered},
		{"remaining", w.Remaining, g.Remaining},
		{"awaiting", w.Awaiting, g.Awaiting},
		{"unneeded", w.Unneeded, g.Unneeded},
	} {
		if f.want == nil {
			continue
		}
		if a, b := sorted(f.want), sorted(f.got); !slices.Equal(a, b) {
			out = append(out, fmt.Sprintf("%s: want %v, got %v", f.name, a, b))
		}
	}
	if w.Error != nil {
		switch {
		case g.Error == nil:
			out = append(out, fmt.Sprintf("error: want %q, got none", *w.Error))
		case *g.Error != *w.Error:
			out = append(out, fmt.Sprintf("error: want %q, got %q", *w.Error, *g.Error))
		}
	}
	if w.NotTriggerScaleUp != nil {
		out = append(out, compareMessages("NotTriggerScaleUp", w.NotTriggerScaleUp, g.NotTriggerScaleUp, SameNotTriggerScaleUp)...)
	}
	if w.TriggeredScaleUp != nil {
		out = append(out, compareMessages("TriggeredScaleUp", w.TriggeredScaleUp, g.TriggeredScaleUp,
			func(a, b string) bool { return a == b })...)
	}
	if w.Unremovable != nil && !reflect.DeepEqual(nonNil(w.Unremovable), nonNil(g.Unremovable)) {
		out = append(out, fmt.Sprintf("unremovable: want %v, got %v", w.Unremovable, g.Unremovable))
	}
	return out
}

// NotTriggerScaleUpPrefix starts every NotTriggerScaleUp message.
const NotTriggerScaleUpPrefix = "pod didn't trigger scale-up: "

// Reasons splits a NotTriggerScaleUp message into its aggregated parts
// ("<count> <reason>"), sorted. A reason can itself contain ", " (a taint
// list, say), so a part only starts where a count follows the separator.
func Reasons(msg string) ([]string, bool) {
	body, ok := strings.CutPrefix(msg, NotTriggerScaleUpPrefix)
	if !ok {
		return nil, false
	}
	var parts []string
	for _, piece := range strings.Split(body, ", ") {
		if len(parts) > 0 && !startsWithCount(piece) {
			parts[len(parts)-1] += ", " + piece
			continue
		}
		parts = append(parts, piece)
	}
	sort.Strings(parts)
	return parts, true
}

func startsWithCount(s string) bool {
	n, rest, ok := strings.Cut(s, " ")
	if !ok || n == "" || rest == "" {
		return false
	}
	for _, r := range n {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// SameNotTriggerScaleUp reports whether two NotTriggerScaleUp messages carry
// the same reasons, in any order.
func SameNotTriggerScaleUp(a, b string) bool {
	ra, oka := Reasons(a)
	rb, okb := Reasons(b)
	if !oka || !okb {
		return a == b
	}
	return slices.Equal(ra, rb)
}

func compareMessages(kind string, want, got map[string]string, same func(a, b string) bool) []string {
	var out []string
	for _, pod := range keys(want, got) {
		w, wok := want[pod]
		g, gok := got[pod]
		switch {
		case !gok:
			out = append(out, fmt.Sprintf("%s %s: want %q, got no event", kind, pod, w))
		case !wok:
			out = append(out, fmt.Sprintf("%s %s: want no event, got %q", kind, pod, g))
		case !same(w, g):
			out = append(out, fmt.Sprintf("%s %s: want %q, got %q", kind, pod, w, g))
		}
	}
	return out
}

func compareOptions(want, got []scenario.Option) string {
	norm := func(os []scenario.Option) []string {
		var s []string
		for _, o := range os {
			line := fmt.Sprintf("%s+%d", o.Group, o.Nodes)
			if o.Pods != nil {
				line += fmt.Sprintf("%v", sorted(o.Pods))
			}
			s = append(s, line)
		}
		sort.Strings(s)
		return s
	}
	// Options in want without pods say nothing about pods: drop got's too.
	g := slices.Clone(got)
	for i := range g {
		for _, w := range want {
			if w.Group == g[i].Group && w.Pods == nil {
				g[i].Pods = nil
			}
		}
	}
	if a, b := norm(want), norm(g); !slices.Equal(a, b) {
		return fmt.Sprintf("expansion options: want %v, got %v", a, b)
	}
	return ""
}

func sortChanges(c []scenario.GroupChange) {
	sort.Slice(c, func(i, j int) bool { return c[i].Group < c[j].Group })
}

func equalChanges(a, b []scenario.GroupChange) bool {
	return slices.Equal(a, b)
}

func changes(c []scenario.GroupChange) string {
	if len(c) == 0 {
		return "none"
	}
	var parts []string
	for _, x := range c {
		parts = append(parts, fmt.Sprintf("%s %d->%d", x.Group, x.From, x.To))
	}
	return strings.Join(parts, ", ")
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	if c == nil {
		c = []string{}
	}
	sort.Strings(c)
	return c
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func keys(a, b map[string]string) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
