package diff

import (
	"testing"

	"github.com/berth-sim/berth/ca-conformance/berthrun"
)

// berth's autoscaler agrees with every expectation transcribed from
// cluster-autoscaler's own unit tests (cases/), and keeps the invariants on
// generated scenarios. CI's check of issue 12's differential proof; the run
// against the genuine autoscaler is opt-in (genuine/, README).
func TestBerthAgrees(t *testing.T) {
	outcomes, err := CheckCases(berthrun.Default)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outcomes {
		if !o.Agrees() {
			t.Errorf("%s: berth disagrees with cluster-autoscaler: err=%v\n  %s", o.Case, o.Err, join(o.Diffs))
		}
	}
}

// berth gives the genuine autoscaler's answer on every regression scenario
// (regressions/).
func TestBerthRegressions(t *testing.T) {
	outcomes, err := CheckRegressions(berthrun.Default)
	if err != nil {
		t.Fatal(err)
	}
	if len(outcomes) == 0 {
		t.Fatal("no regression scenarios")
	}
	for _, o := range outcomes {
		if !o.Agrees() {
			t.Errorf("%s: berth disagrees with the genuine autoscaler: err=%v\n  %s", o.Case, o.Err, join(o.Diffs))
		}
	}
}

func TestBerthInvariantsGenerated(t *testing.T) {
	var seeds []uint64
	for s := uint64(1); s <= 200; s++ {
		seeds = append(seeds, s)
	}
	for _, o := range CheckGenerated(berthrun.Default, seeds) {
		if !o.Agrees() {
			t.Errorf("%s: err=%v\n  %s", o.Case, o.Err, join(o.Diffs))
		}
	}
}

func join(l []string) string {
	out := ""
	for i, s := range l {
		if i > 0 {
			out += "\n  "
		}
		out += s
	}
	return out
}
