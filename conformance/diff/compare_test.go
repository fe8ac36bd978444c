package diff

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/conformance/berthrun"
	"github.com/berth-sim/berth/conformance/generator"
	"github.com/berth-sim/berth/conformance/scenario"
)

func TestCompare(t *testing.T) {
	feasible := func(total int64) scenario.NodeVerdict {
		return scenario.NodeVerdict{Total: total, Scores: map[string]int64{"A": total}}
	}
	base := func() scenario.PodResult {
		return scenario.PodResult{Pod: "default/p", Node: "n1", TopNodes: []string{"n1", "n2"}, Examined: 3,
			Nodes: map[string]scenario.NodeVerdict{"n1": feasible(50), "n2": feasible(50),
				"n3": {Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reasons: []string{"untolerated"}}}}
	}
	failed := func(msg string) scenario.PodResult {
		return scenario.PodResult{Pod: "default/p", Message: msg}
	}
	tests := []struct {
		name   string
		mutate func(u *scenario.PodResult)
		b      *scenario.PodResult
		mode   Mode
		what   string
		node   string
		plugin string
	}{
		{name: "identical", mutate: func(*scenario.PodResult) {}},
		{name: "upstream failed", mutate: func(u *scenario.PodResult) { *u = failed("0/3 nodes") }, what: "outcome"},
		{name: "examined", mutate: func(u *scenario.PodResult) { u.Examined = 2 }, what: "nodes examined"},
		{name: "not in top set", mutate: func(u *scenario.PodResult) { u.Node = "n2" }, what: "selected node (berth's is not in upstream's top set)"},
		{name: "top set", mutate: func(u *scenario.PodResult) { u.TopNodes = []string{"n1"} }, what: "top-scoring nodes"},
		{name: "plugin", mutate: func(u *scenario.PodResult) {
			u.Nodes["n3"] = scenario.NodeVerdict{Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable"}
		}, what: "rejecting plugin", node: "n3"},
		{name: "reasons", mutate: func(u *scenario.PodResult) {
			u.Nodes["n3"] = scenario.NodeVerdict{Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reasons: []string{"other"}}
		}, what: "filter verdict", node: "n3", plugin: "TaintToleration"},
		{name: "score", mutate: func(u *scenario.PodResult) {
			u.Nodes["n2"] = scenario.NodeVerdict{Total: 50, Scores: map[string]int64{"A": 40, "B": 10}}
		}, what: "weighted score", node: "n2", plugin: "A"},
		{name: "missing node", mutate: func(u *scenario.PodResult) { delete(u.Nodes, "n3") }, what: "node reported", node: "n3"},
		{name: "outcome mode ignores scores", mode: Outcome, mutate: func(u *scenario.PodResult) {
			u.Node, u.TopNodes = "n2", nil
			u.Nodes["n1"] = scenario.NodeVerdict{Total: 1}
		}},
		{name: "outcome mode: examined differs", mode: Outcome, mutate: func(u *scenario.PodResult) { u.Examined = 5 }},
		{name: "outcome mode: feasible count differs", mode: Outcome, mutate: func(u *scenario.PodResult) { u.Nodes["n4"] = scenario.NodeVerdict{} },
			what: "feasible nodes found"},
		{name: "outcome mode: failure examines all", mode: Outcome, b: ptr(failed("m")),
			mutate: func(u *scenario.PodResult) { *u = failed("m"); u.Examined = 4 }, what: "nodes examined"},
		{name: "messages", b: ptr(failed("0/3 nodes are available: 3 a.")),
			mutate: func(u *scenario.PodResult) { *u = failed("0/3 nodes are available: 3 b.") }, what: "FailedScheduling message"},
		{name: "same message", b: ptr(failed("m")), mutate: func(u *scenario.PodResult) { *u = failed("m") }},
		{name: "nominated node", b: ptr(failed("m")), mutate: func(u *scenario.PodResult) { *u = failed("m"); u.NominatedNode = "n1" },
			what: "nominated node"},
		{name: "victims", b: ptr(failed("m")), mutate: func(u *scenario.PodResult) { *u = failed("m"); u.Victims = []string{"default/v"} },
			what: "preemption victims"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := base()
			if tc.b != nil {
				b = *tc.b
			}
			u := base()
			if tc.b != nil {
				u = *tc.b
			}
			tc.mutate(&u)
			d := Compare(b, u, tc.mode)
			switch {
			case tc.what == "" && d != nil:
				t.Errorf("unexpected disagreement: %v", d)
			case tc.what != "" && d == nil:
				t.Errorf("no disagreement, want %q", tc.what)
			case d != nil && (d.What != tc.what || d.Node != tc.node || d.Plugin != tc.plugin):
				t.Errorf("got %q node %q plugin %q, want %q %q %q", d.What, d.Node, d.Plugin, tc.what, tc.node, tc.plugin)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// skewed is a fake upstream: berth, except that it reports one node's
// verdict differently from the k-th pod on.
type skewed struct {
	*berthrun.Runner
	n, from int
}

func (s *skewed) Schedule(pod *v1.Pod, align string) (scenario.PodResult, error) {
	res, err := s.Runner.Schedule(pod, align)
	s.n++
	if s.n > s.from && res.Node != "" {
		res.Node = "elsewhere"
	}
	return res, err
}

// TestRunAgainstBerth runs the harness with berth on both sides: it must
// agree on every pod; a skewed copy must be caught at the right pod.
func TestRunAgainstBerth(t *testing.T) {
	var sum Summary
	for seed := uint64(0); seed < 30; seed++ {
		rep, err := Run(generator.Small(seed), berthrun.New(), berthrun.New(), Exact)
		if err != nil {
			t.Fatal(err)
		}
		if rep.First != nil {
			t.Fatalf("berth disagrees with itself: %v", rep.First)
		}
		sum.Add(rep)
	}
	if sum.Agreed != sum.Compared || sum.Scheduled == 0 || sum.Unschedulable == 0 {
		t.Errorf("summary: %v", &sum)
	}
	sc := generator.Small(7)
	rep, err := Run(sc, berthrun.New(), &skewed{Runner: berthrun.New(), from: 3}, Exact)
	if err != nil {
		t.Fatal(err)
	}
	if rep.First == nil {
		t.Fatal("skew not detected")
	}
	if rep.First.Scenario != sc.Name || rep.Compared <= 3 || rep.Agreed != rep.Compared-1 {
		t.Errorf("report %+v, first %v", rep, rep.First)
	}
}

func TestEquivalentPreemption(t *testing.T) {
	prio := map[string]int32{"a": 0, "b": 0, "c": 5, "d": 5}
	tests := []struct {
		b, u []string
		want bool
	}{
		{b: []string{"a"}, u: []string{"b"}, want: true},
		{b: []string{"a", "c"}, u: []string{"b", "d"}, want: true},
		{b: []string{"a"}, u: []string{"c"}},
		{b: []string{"a"}, u: []string{"a", "b"}},
		{b: nil, u: nil},
	}
	for _, tt := range tests {
		got := EquivalentPreemption(scenario.PodResult{Victims: tt.b}, scenario.PodResult{Victims: tt.u}, prio)
		if got != tt.want {
			t.Errorf("%v vs %v: got %v", tt.b, tt.u, got)
		}
	}
}
