package diff

import (
	"slices"
	"strings"
	"testing"

	"github.com/berth-sim/berth/karpenter-conformance/scenario"
)

func TestInstanceTypesRunsAreSets(t *testing.T) {
	p := []float64{1, 1, 2, 3}
	if msg := InstanceTypes([]string{"a", "b", "c", "d"}, p, []string{"b", "a", "c", "d"}, p); msg != "" {
		t.Errorf("reordered tie run: %s", msg)
	}
	if msg := InstanceTypes([]string{"a", "b", "c", "d"}, p, []string{"a", "x", "c", "d"}, p); !strings.Contains(msg, "run at 1") {
		t.Errorf("different members of a run: %q", msg)
	}
	if msg := InstanceTypes([]string{"a", "c"}, []float64{1, 2}, []string{"a", "c"}, []float64{1, 3}); msg == "" {
		t.Error("different prices agree")
	}
}

func TestInstanceTypesCutRunIsPartial(t *testing.T) {
	names := func(last string) ([]string, []float64) {
		var n []string
		var p []float64
		for i := range MaxInstanceTypes - 1 {
			n = append(n, string(rune('A'+i)))
			p = append(p, float64(i))
		}
		return append(n, last), append(p, 100)
	}
	bn, bp := names("x")
	un, up := names("y")
	if msg := InstanceTypes(bn, bp, un, up); msg != "" {
		t.Errorf("run cut at %d compared as a full set: %s", MaxInstanceTypes, msg)
	}
}

func TestVaryingErrorTextsComparePresence(t *testing.T) {
	berth := &scenario.Result{Errors: []scenario.PodError{{Pod: "ns/p", Error: "text B"}}}
	u1 := &scenario.Result{Errors: []scenario.PodError{{Pod: "ns/p", Error: "text 1"}}}
	u2 := &scenario.Result{Errors: []scenario.PodError{{Pod: "ns/p", Error: "text 2"}}}
	if v := Compare(berth, []*scenario.Result{u1}); v.Agree {
		t.Error("different stable error text agreed")
	}
	if v := Compare(berth, []*scenario.Result{u1, u2}); !v.Agree {
		t.Errorf("varying upstream text compared exactly: %s", v.First)
	}
	if v := Compare(&scenario.Result{}, []*scenario.Result{u1, u2}); v.Agree {
		t.Error("missing error agreed")
	}
}

func TestErrorClauseOrderIsNotADifference(t *testing.T) {
	e := func(text string) *scenario.Result {
		return &scenario.Result{Errors: []scenario.PodError{{Pod: "ns/p", Error: text}}}
	}
	ab := e("incompatible requirements, key a, x; key b, y")
	ba := e("incompatible requirements, key b, y; key a, x")
	if v := Compare(ab, []*scenario.Result{ba}); !v.Agree {
		t.Errorf("clauses in another map-walk order: %s", v.First)
	}
	// Two upstream texts that differ only in clause order do not make the
	// pod's text vary, so a different berth text still disagrees.
	if v := Compare(e("incompatible requirements, key c, z"), []*scenario.Result{ab, ba}); v.Agree {
		t.Error("permuted upstream texts relaxed the comparison to presence")
	}
}

func TestSamplingSchedule(t *testing.T) {
	p := Sampling{Initial: 3, Settle: 30, Budget: 200}
	var got []int
	for n := 3; n < p.Budget; n = p.next(n) {
		got = append(got, n)
	}
	want := []int{3, 6, 12, 24, 30, 60, 120}
	if !slices.Equal(got, want) {
		t.Errorf("sample sizes %v, want %v then %d", got, want, p.Budget)
	}
	if n := p.next(120); n != 200 {
		t.Errorf("next(120) = %d, want the budget 200", n)
	}
}
