package berthrun

import (
	"testing"

	"github.com/berth-sim/berth/ca-conformance/cases"
)

// Every transcribed case runs through berth without an error and yields a
// result naming only the case's pods (agreement itself is diff's test).
func TestRunsEveryCase(t *testing.T) {
	all, err := cases.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all {
		res, err := Run(&c.Scenario)
		if err != nil {
			t.Errorf("%s: %v", c.Scenario.Name, err)
			continue
		}
		if res.ScaleUp == nil || res.Triggered == nil {
			t.Errorf("%s: lists must be non-nil (asserted empty), got %+v", c.Scenario.Name, res)
		}
	}
}

func TestPriorities(t *testing.T) {
	got := Priorities(map[int][]string{10: {`.t2\.large.*`}, 5: {".*"}})
	want := "5:\n  - \".*\"\n10:\n  - \".t2\\\\.large.*\"\n"
	if got != want {
		t.Fatalf("Priorities = %q, want %q", got, want)
	}
}
