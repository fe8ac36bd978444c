package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/store"
)

// checkIdle is TestScenarios' check of the idle `advance` against the
// controllers (docs/state.md#idle-advance): after every command of every
// scenario that changed the state, each probe duration the state allows
// an idle advance for is advanced twice from copies of the state, once
// idle and once with the controllers run, and the two databases must hold
// the same entries. It counts the comparisons in probes, by idleness.
func checkIdle(t *testing.T, d *datadriven.TestData, state string, probes *idleCounts) func(line string, code int, before, after map[string]string) {
	return func(line string, code int, before, after map[string]string) {
		if code == 0 && !equalFiles(before, after) {
			probes.add(probeIdle(t, fmt.Sprintf("%s: after %q", d.Pos, line), state))
		}
	}
}

// idleCounts counts compared advances by cluster.Idleness.
type idleCounts [3]int

func (c *idleCounts) add(o idleCounts) {
	for i := range c {
		c[i] += o[i]
	}
}

// check fails t unless both kinds of idle advance were compared.
func (c *idleCounts) check(t *testing.T) {
	t.Helper()
	t.Logf("advances compared: %d clock only, %d with heartbeats, %d from a settled state past its first timer",
		c[cluster.ClockOnly], c[cluster.HeartbeatsOnly], c[cluster.NotIdle])
	if !t.Failed() && (c[cluster.ClockOnly] == 0 || c[cluster.HeartbeatsOnly] == 0 || c[cluster.NotIdle] == 0) {
		t.Error("some kind of idle advance was never compared")
	}
}

// probeIdle compares idle and full advances of state's current state for
// the durations it allows an idle advance for, and returns how many of
// each kind.
func probeIdle(t *testing.T, where, state string) idleCounts {
	t.Helper()
	h, err := cluster.LoadHead(state, false)
	if err != nil {
		return idleCounts{} // no database (nothing applied yet)
	}
	var n idleCounts
	for _, d := range idleProbes(h) {
		kind := h.IdleThrough(h.Now.Add(d))
		if kind == cluster.NotIdle && !busyProbe(h, d) {
			continue
		}
		idle, full := t.TempDir(), t.TempDir()
		copyState(t, state, idle)
		copyState(t, state, full)
		forget(t, full)
		advance(t, idle, d)
		advance(t, full, d)
		a, b := dump(t, idle), dump(t, full)
		if diff := diffDumps(a, b); diff != "" {
			t.Errorf("%s: advance %s (%d) from the record and with the controllers differ:\n%s", where, d, kind, diff)
		}
		n[kind]++
	}
	return n
}

// busyProbe reports whether an advance of d over the head h runs the
// controllers but may skip their first round (the record matches: RunNow
// over a settled state), which the comparison then checks too.
func busyProbe(h *cluster.State, d time.Duration) bool {
	r := h.Settled
	return h.IdleThrough(h.Now.Add(d)) == cluster.NotIdle && r != nil && r.ResourceVersion == h.ResourceVersion && r.At.Equal(h.Now) &&
		(r.Until == nil || r.Until.After(r.At))
}

// idleProbes are durations to try: a second; the longest the clock alone
// may move (a second short of the next heartbeat tick) and onto that tick;
// the longest with only heartbeats (a second short of the first timer or
// other clock-driven change; a month when there is neither); and a second
// past that, which runs the controllers.
func idleProbes(h *cluster.State) []time.Duration {
	out := []time.Duration{time.Second}
	r := h.Settled
	if r == nil {
		return out
	}
	if r.Heartbeat != nil {
		d := r.Heartbeat.Sub(h.Now)
		out = append(out, d-time.Second, d)
	}
	var bound time.Time
	for _, tm := range h.Timers {
		if bound.IsZero() || tm.At.Before(bound) {
			bound = tm.At
		}
	}
	if r.Until != nil && (bound.IsZero() || r.Until.Before(bound)) {
		bound = *r.Until
	}
	if bound.IsZero() {
		out = append(out, 30*24*time.Hour)
	} else {
		out = append(out, bound.Sub(h.Now)-time.Second, bound.Sub(h.Now)+time.Second)
	}
	slices.Sort(out)
	return slices.Compact(slices.DeleteFunc(out, func(d time.Duration) bool { return d < 0 }))
}

func advance(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	var out strings.Builder
	if code := Run([]string{"--state", dir, "advance", d.String()}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("advance %s: exit %d: %s", d, code, out.String())
	}
}

// forget removes the state's settled record, so that its next advance
// runs the controllers (whose save records the state settled afresh).
func forget(t *testing.T, dir string) {
	t.Helper()
	err := store.Write(filepath.Join(dir, cluster.StateDB), []store.Change{{Bucket: "meta",
		Put: []store.KV{{Key: []byte("settled"), Value: []byte("null")}}}})
	if err != nil {
		t.Fatal(err)
	}
}

func copyState(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(from, cluster.StateDB))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, cluster.StateDB), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// dump is every entry of the database: bucket, then key, then value.
func dump(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	err := store.Read(filepath.Join(dir, cluster.StateDB), nil, func(b map[string][]store.KV) error {
		for name, kvs := range b {
			m := map[string]string{}
			for _, kv := range kvs {
				m[string(kv.Key)] = string(kv.Value)
			}
			out[name] = m
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffDumps names the entries that differ (at most a few), "" when none.
func diffDumps(a, b map[string]map[string]string) string {
	var lines []string
	buckets := map[string]bool{}
	for name := range a {
		buckets[name] = true
	}
	for name := range b {
		buckets[name] = true
	}
	for _, name := range cluster.SortedKeys(buckets) {
		keys := map[string]bool{}
		for k := range a[name] {
			keys[k] = true
		}
		for k := range b[name] {
			keys[k] = true
		}
		for _, k := range cluster.SortedKeys(keys) {
			va, oka := a[name][k]
			vb, okb := b[name][k]
			if oka != okb || va != vb {
				lines = append(lines, fmt.Sprintf("  %s %q: idle %q\n  %s %q: full %q", name, k, clip(va, oka), name, k, clip(vb, okb)))
			}
		}
	}
	if len(lines) > 4 {
		lines = append(lines[:4], fmt.Sprintf("  ... %d more", len(lines)-4))
	}
	return strings.Join(lines, "\n")
}

func clip(v string, ok bool) string {
	if !ok {
		return "(absent)"
	}
	if len(v) > 120 {
		return v[:120] + "..."
	}
	return v
}
