package diff

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/berth-sim/berth/ca-conformance/berthrun"
	"github.com/berth-sim/berth/ca-conformance/cases"
	"github.com/berth-sim/berth/ca-conformance/scenario"
)

func str(s string) *string { return &s }

func TestReasons(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want []string
		ok   bool
	}{
		{"pod didn't trigger scale-up: 1 max node group size reached", []string{"1 max node group size reached"}, true},
		{
			"pod didn't trigger scale-up: 1 node(s) had untolerated taint {role: scaler}, 1 max node group size reached",
			[]string{"1 max node group size reached", "1 node(s) had untolerated taint {role: scaler}"}, true,
		},
		// A reason with ", " inside stays whole: a new part starts only
		// where a count follows.
		{
			"pod didn't trigger scale-up: 2 node(s) had untolerated taint {a: b}, {c: d}, 1 Insufficient cpu",
			[]string{"1 Insufficient cpu", "2 node(s) had untolerated taint {a: b}, {c: d}"}, true,
		},
		{
			"pod didn't trigger scale-up: 1 max cluster cpu, memory limit reached, 2 max node group size reached",
			[]string{"1 max cluster cpu, memory limit reached", "2 max node group size reached"}, true,
		},
		{"pod triggered scale-up: [{ng 1->2 (max: 5)}]", nil, false},
	} {
		got, ok := Reasons(tc.msg)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("Reasons(%q) = %q, %v; want %q, %v", tc.msg, got, ok, tc.want, tc.ok)
		}
	}
	// CA joins the parts in map order: any order is the same message.
	a := "pod didn't trigger scale-up: 1 Insufficient cpu, 3 max node group size reached"
	b := "pod didn't trigger scale-up: 3 max node group size reached, 1 Insufficient cpu"
	if !SameNotTriggerScaleUp(a, b) {
		t.Errorf("reordered reasons compare unequal")
	}
	if SameNotTriggerScaleUp(a, "pod didn't trigger scale-up: 1 Insufficient cpu, 2 max node group size reached") {
		t.Errorf("different counts compare equal")
	}
}

func TestCompare(t *testing.T) {
	want := &scenario.Result{
		ScaleUp:   []scenario.GroupChange{{Group: "b", From: 1, To: 2}, {Group: "a", From: 0, To: 1}},
		Triggered: []string{"p2", "p1"},
		Remaining: []string{},
		NotTriggerScaleUp: map[string]string{
			"p3": "pod didn't trigger scale-up: 1 Insufficient cpu, 1 max node group size reached",
		},
	}
	same := &scenario.Result{
		ScaleUp:   []scenario.GroupChange{{Group: "a", From: 0, To: 1}, {Group: "b", From: 1, To: 2}},
		Triggered: []string{"p1", "p2"},
		// Awaiting is not asserted by want.
		Awaiting: []string{"p9"},
		NotTriggerScaleUp: map[string]string{
			"p3": "pod didn't trigger scale-up: 1 max node group size reached, 1 Insufficient cpu",
		},
	}
	if d := Compare(want, same); len(d) != 0 {
		t.Errorf("Compare(equal up to order) = %q", d)
	}
	for _, tc := range []struct {
		name   string
		mutate func(r *scenario.Result)
		want   string
	}{
		{"size", func(r *scenario.Result) { r.ScaleUp[1].To = 3 }, "scale-up: want a 0->1, b 1->2, got a 0->1, b 1->3"},
		{"no scale-up", func(r *scenario.Result) { r.ScaleUp = nil }, "scale-up: want a 0->1, b 1->2, got none"},
		{"triggered", func(r *scenario.Result) { r.Triggered = r.Triggered[:1] }, "triggered: want [p1 p2], got [p1]"},
		{"remaining asserted empty", func(r *scenario.Result) { r.Remaining = []string{"p3"} }, "remaining: want [], got [p3]"},
		{"event missing", func(r *scenario.Result) { r.NotTriggerScaleUp = nil }, "NotTriggerScaleUp p3: want"},
		{"event extra", func(r *scenario.Result) { r.NotTriggerScaleUp["p4"] = "pod didn't trigger scale-up: 1 x" }, "NotTriggerScaleUp p4: want no event"},
		{"event reasons", func(r *scenario.Result) {
			r.NotTriggerScaleUp["p3"] = "pod didn't trigger scale-up: 1 Insufficient cpu"
		}, "NotTriggerScaleUp p3: want"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := *same
			got.ScaleUp = slices.Clone(same.ScaleUp)
			got.NotTriggerScaleUp = map[string]string{"p3": same.NotTriggerScaleUp["p3"]}
			tc.mutate(&got)
			d := Compare(want, &got)
			if len(d) != 1 || !strings.HasPrefix(d[0], tc.want) {
				t.Errorf("Compare = %q, want one line starting %q", d, tc.want)
			}
		})
	}
	errWant := &scenario.Result{Error: str(`exceeded quota: "cluster-wide", resources: cpu`)}
	if d := Compare(errWant, &scenario.Result{}); len(d) != 1 {
		t.Errorf("missing error not reported: %q", d)
	}
	// The expander's pick is asserted only when want names one.
	if d := Compare(&scenario.Result{Chosen: "a"}, &scenario.Result{Chosen: "b"}); len(d) != 1 || d[0] != "chosen: want a, got b" {
		t.Errorf("Compare(chosen a, b) = %q", d)
	}
	if d := Compare(&scenario.Result{}, &scenario.Result{Chosen: "b"}); len(d) != 0 {
		t.Errorf("Compare(no chosen, b) = %q", d)
	}
}

func TestOptionsCompare(t *testing.T) {
	want := &scenario.Result{Options: []scenario.Option{{Group: "std", Nodes: 1}, {Group: "gpu", Nodes: 1, Pods: []string{"a"}}}}
	got := &scenario.Result{Options: []scenario.Option{{Group: "gpu", Nodes: 1, Pods: []string{"a"}}, {Group: "std", Nodes: 1, Pods: []string{"a"}}}}
	if d := Compare(want, got); len(d) != 0 {
		t.Errorf("pods of an option want leaves open were compared: %q", d)
	}
	got.Options[0].Nodes = 2
	if d := Compare(want, got); len(d) != 1 {
		t.Errorf("node count difference not reported: %q", d)
	}
}

// The cases are transcriptions; their expectations must at least be
// possible cluster-autoscaler answers on their own scenarios.
func TestCasesConsistent(t *testing.T) {
	all, err := cases.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 10 {
		t.Fatalf("%d cases, want the whole corpus", len(all))
	}
	for _, c := range all {
		if !strings.HasPrefix(c.Source, "kubernetes/autoscaler cluster-autoscaler/") {
			t.Errorf("%s: source %q names no upstream test", c.File, c.Source)
		}
		if c.Scenario.Name+".yaml" != c.File {
			t.Errorf("%s: scenario named %q", c.File, c.Scenario.Name)
		}
		if d := Invariants(&c.Scenario, &c.Expect); len(d) != 0 {
			t.Errorf("%s: expectation breaks invariants: %q", c.File, d)
		}
	}
}

func TestInvariants(t *testing.T) {
	sc := &scenario.Scenario{
		Options:    scenario.Options{MaxNodesTotal: 4},
		NodeGroups: []scenario.NodeGroup{{Name: "ng", Min: 1, Max: 3}},
		Nodes:      []scenario.Node{{Name: "n1", Group: "ng"}},
		Pods:       []scenario.Pod{{Name: "p1"}, {Name: "p2"}},
	}
	if d := Invariants(sc, &scenario.Result{
		ScaleUp:   []scenario.GroupChange{{Group: "ng", From: 1, To: 3}},
		Triggered: []string{"p1", "p2"},
	}); len(d) != 0 {
		t.Errorf("valid result: %q", d)
	}
	for _, tc := range []struct {
		name string
		res  scenario.Result
		want string
	}{
		{"past max", scenario.Result{ScaleUp: []scenario.GroupChange{{Group: "ng", From: 1, To: 4}}}, "scale-up: ng 1->4 outside"},
		{"wrong from", scenario.Result{ScaleUp: []scenario.GroupChange{{Group: "ng", From: 0, To: 2}}}, "scale-up: ng from 0"},
		{"unknown pod", scenario.Result{Remaining: []string{"p9"}}, "remaining: p9 is not a pending pod"},
		{"pod twice", scenario.Result{Remaining: []string{"p1"}, Awaiting: []string{"p1"}}, "awaiting: p1 is also remaining"},
		{"triggered nothing", scenario.Result{Triggered: []string{"p1"}}, "triggered [p1] without a scale-up"},
		{"no reasons", scenario.Result{NotTriggerScaleUp: map[string]string{"p1": "pod didn't trigger scale-up: "}}, "NotTriggerScaleUp p1: no reasons"},
		{"unneeded unknown", scenario.Result{Unneeded: []string{"n9"}}, "unneeded: unknown node n9"},
	} {
		d := Invariants(sc, &tc.res)
		if len(d) != 1 || !strings.HasPrefix(d[0], tc.want) {
			t.Errorf("%s: Invariants = %q, want one line starting %q", tc.name, d, tc.want)
		}
	}
	sc.Options.MaxNodesTotal = 2
	if d := Invariants(sc, &scenario.Result{ScaleUp: []scenario.GroupChange{{Group: "ng", From: 1, To: 3}}}); len(d) != 1 {
		t.Errorf("--max-nodes-total not enforced: %q", d)
	}
}

// CheckCases is the berth comparison's engine: an oracle that answers each
// case's own expectation agrees everywhere, one that is off somewhere is
// caught there, and a runner's error is reported per case, not hidden.
func TestCheckCases(t *testing.T) {
	all, err := cases.All()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*scenario.Result{}
	for i := range all {
		byName[all[i].Scenario.Name] = &all[i].Expect
	}
	oracle := berthrun.RunnerFunc(func(sc *scenario.Scenario) (*scenario.Result, error) {
		r := *byName[sc.Name]
		return &r, nil
	})
	outcomes, err := CheckCases(oracle)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outcomes {
		if !o.Agrees() {
			t.Errorf("%s: oracle disagrees with itself: %v %q", o.Case, o.Err, o.Diffs)
		}
	}
	offByOne := berthrun.RunnerFunc(func(sc *scenario.Scenario) (*scenario.Result, error) {
		r := *byName[sc.Name]
		if sc.Name == "scale-up-ok" {
			r.ScaleUp = []scenario.GroupChange{{Group: "ng2", From: 1, To: 3}}
		}
		return &r, nil
	})
	outcomes, _ = CheckCases(offByOne)
	var bad []string
	for _, o := range outcomes {
		if !o.Agrees() {
			bad = append(bad, o.Case)
		}
	}
	if !slices.Equal(bad, []string{"scale-up-ok.yaml"}) {
		t.Errorf("disagreeing cases = %v, want [scale-up-ok.yaml]", bad)
	}
	failing := berthrun.RunnerFunc(func(*scenario.Scenario) (*scenario.Result, error) {
		return nil, berthrun.ErrNotWired
	})
	outcomes, _ = CheckCases(failing)
	for _, o := range outcomes {
		if o.Agrees() || !errors.Is(o.Err, berthrun.ErrNotWired) {
			t.Errorf("%s: failing runner's outcome %v, want ErrNotWired", o.Case, o.Err)
		}
	}
}
