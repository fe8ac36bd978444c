//go:build genuine

package genuine

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/berth-sim/berth/ca-conformance/berthrun"
	"github.com/berth-sim/berth/ca-conformance/generator"
	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// TestScaleDownGenerated compares the scale-down candidates, seeds
// GENUINE_SEEDS: the genuine planner's unneeded nodes after one loop
// (ScaleDown) against berth's (berthrun.Run's Unneeded), as sets, and the
// reason each other group node stays, where both name one (README,
// "Scale-down").
func TestScaleDownGenerated(t *testing.T) {
	from, to := seeds(t)
	maxRuns := envCount(t, "GENUINE_MAX_RUNS", 300)
	agree, sampled, unneededDiff, reasonDiff, compared := 0, 0, 0, 0, 0
	for seed := from; seed <= to; seed++ {
		sc := generator.Small(seed)
		b, err := berthrun.Run(sc)
		if err != nil {
			t.Fatalf("seed %d: berth: %v", seed, err)
		}
		// The removal simulator places pods on the snapshot's nodes in
		// its list order, a Go map's: the genuine answer varies run to
		// run, so it is sampled until berth's comes up.
		var d []string
		runs := 0
		for runs < maxRuns {
			runs++
			g, err := ScaleDown(sc)
			if err != nil {
				t.Fatalf("seed %d: genuine: %v", seed, err)
			}
			if runs == 1 {
				compared += len(g.Unneeded) + len(g.Unremovable)
			}
			d = scaleDownDiff(g, b)
			if len(d) == 0 || !strings.HasPrefix(d[0], "unneeded") && runs >= 5 {
				break
			}
		}
		switch {
		case len(d) == 0:
			agree++
			if runs > 1 {
				sampled++
			}
		case strings.HasPrefix(d[0], "unneeded"):
			unneededDiff++
			t.Errorf("seed %d (%d runs): %s", seed, runs, strings.Join(d, "; "))
		default:
			reasonDiff++
			t.Errorf("seed %d (%d runs): %s", seed, runs, strings.Join(d, "; "))
		}
	}
	t.Logf("scale-down seeds %d-%d: %d agree (%d after more than one genuine run), %d differ in unneeded, %d only in a reason (%d node verdicts compared)",
		from, to, agree, sampled, unneededDiff, reasonDiff, compared)
}

// scaleDownDiff lists how berth's scale-down answer b differs from the
// genuine g: the unneeded sets first, then per node the reason it stays.
// berth's BlockedByPod carries no drain reason in Result, so the genuine
// "BlockedByPod/<reason>" is compared on its first part.
func scaleDownDiff(g, b *scenario.Result) []string {
	var out []string
	gu, bu := append([]string{}, g.Unneeded...), append([]string{}, b.Unneeded...)
	sort.Strings(gu)
	sort.Strings(bu)
	if !reflect.DeepEqual(gu, bu) {
		out = append(out, fmt.Sprintf("unneeded: genuine %v, berth %v", gu, bu))
	}
	var nodes []string
	for n := range g.Unremovable {
		nodes = append(nodes, n)
	}
	for n := range b.Unremovable {
		if _, ok := g.Unremovable[n]; !ok {
			nodes = append(nodes, n)
		}
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		gr, br := g.Unremovable[n], b.Unremovable[n]
		if gr != br {
			out = append(out, fmt.Sprintf("%s: genuine %q, berth %q", n, gr, br))
		}
	}
	return out
}
