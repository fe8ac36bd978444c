package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-sim/berth/conformance/diff"
	"github.com/berth-sim/berth/conformance/scenario"
)

func resultFor(node, message string, top []string) scenario.PodResult {
	return scenario.PodResult{Pod: "default/p", Node: node, Message: message, TopNodes: top}
}

// TestRunSmall runs every pass on small scenarios: both sides schedule the
// same pods, the comparison covers each of them and agrees, and the berth
// CPU profile is written.
func TestRunSmall(t *testing.T) {
	for _, c := range []Case{
		{Profile: "basic", Nodes: 12, Pods: 40, Percentage: 100, Seed: 1},
		{Profile: "mixed", Nodes: 30, Pods: 40, Percentage: 100, Seed: 2},
		{Profile: "taints", Nodes: 120, Pods: 30, Seed: 3},
	} {
		t.Run(c.String(), func(t *testing.T) {
			prof := filepath.Join(t.TempDir(), "berth.pprof")
			r, err := Run(c, Options{CPUProfile: prof})
			if err != nil {
				t.Fatal(err)
			}
			if r.Compared != c.Pods {
				t.Errorf("compared %d pods, want %d", r.Compared, c.Pods)
			}
			if r.Agreed != r.Compared {
				t.Errorf("agreement %s, first: %v", r.Agreement(), r.First)
			}
			if r.UpstreamScheduled == 0 || r.BerthScheduled == 0 {
				t.Errorf("scheduled upstream %d, berth %d: the profile should place pods", r.UpstreamScheduled, r.BerthScheduled)
			}
			if r.UpstreamCycle <= 0 || r.UpstreamWall < r.UpstreamCycle || r.Berth <= 0 {
				t.Errorf("durations: upstream cycle %v wall %v, berth %v", r.UpstreamCycle, r.UpstreamWall, r.Berth)
			}
			if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
				t.Errorf("CPU profile not written: %v", err)
			}
		})
	}
}

func TestSkipCompare(t *testing.T) {
	r, err := Run(Case{Profile: "spread", Nodes: 10, Pods: 20, Percentage: 100, Seed: 4}, Options{SkipCompare: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Compared != 0 || r.Agreement() != "not compared" {
		t.Errorf("compared %d pods (%s), want none", r.Compared, r.Agreement())
	}
}

func TestRunUnknownProfile(t *testing.T) {
	if _, err := Run(Case{Profile: "nope", Nodes: 1, Pods: 1}, Options{}); err == nil {
		t.Error("unknown profile accepted")
	}
}

func TestDisagreement(t *testing.T) {
	for _, tc := range []struct {
		name  string
		b     string
		bmsg  string
		btop  []string
		u     decision
		exact bool
		want  string // compared field, "" for agreement
	}{
		{"both scheduled", "n1", "", []string{"n1", "n2"}, decision{node: "n2", top: []string{"n1", "n2"}}, true, ""},
		{"same message", "", "0/3 nodes are available", nil, decision{message: "0/3 nodes are available"}, true, ""},
		{"outcome", "n1", "", []string{"n1"}, decision{message: "0/3 nodes are available"}, false, "outcome"},
		{"message", "", "0/3 nodes are available: x", nil, decision{message: "0/3 nodes are available: y"}, false, "FailedScheduling message"},
		{"top set at 100%", "n1", "", []string{"n1"}, decision{node: "n1", top: []string{"n1", "n2"}}, true, "top-scoring nodes"},
		{"top set ignored when adaptive", "n1", "", []string{"n1"}, decision{node: "n3"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := resultFor(tc.b, tc.bmsg, tc.btop)
			d := disagreement(b, tc.u, tc.exact)
			got := ""
			if d != nil {
				got = d.What
			}
			if got != tc.want {
				t.Errorf("disagreement on %q, want %q (%v)", got, tc.want, d)
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	rs := []Result{
		{Case: Case{Profile: "basic", Nodes: 5000, Pods: 10000}, UpstreamCycle: 20e9, UpstreamWall: 25e9, Berth: 1e9,
			UpstreamScheduled: 9000, BerthScheduled: 9000, Compared: 10000, Agreed: 10000},
		{Case: Case{Profile: "mixed", Nodes: 500, Pods: 5000, Percentage: 100}, UpstreamCycle: 50e9, UpstreamWall: 60e9, Berth: 2e9,
			Compared: 4, Agreed: 3, First: &diff.Disagreement{Pod: "default/pod-001", What: "outcome"}},
	}
	got := Markdown(rs)
	for _, want := range []string{
		"| basic | 5000 | 10000 | adaptive | 500 | 10000 | 20.0× | 10000/10000 (100.00%) | 400 | 9000 / 9000 |",
		"| mixed | 500 | 5000 | 100% | 100 | 2500 | 25.0× | 3/4 (75.00%) | 83 | 0 / 0 |",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("table lacks row\n%s\ngot:\n%s", want, got)
		}
	}
	if d := Disagreements(rs); !strings.Contains(d, "mixed 500 nodes / 5000 pods at 100%: scenario , pod default/pod-001: outcome differs") {
		t.Errorf("disagreements:\n%s", d)
	}
}
