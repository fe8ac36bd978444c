package diff

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/berth-sim/berth/conformance/berthrun"
	"github.com/berth-sim/berth/conformance/generator"
	"github.com/berth-sim/berth/conformance/scenario"
	"github.com/berth-sim/berth/conformance/upstream"
)

var (
	long     = flag.Bool("long", false, "run thousands of seeds instead of the quick set")
	seeds    = flag.Int("seeds", 0, "number of small seeds (default 200, or 3000 with -long)")
	oneSeed  = flag.Int64("seed", -1, "rerun only this small seed and write its YAML to -yaml-dir")
	yamlDir  = flag.String("yaml-dir", os.TempDir(), "where -seed writes the scenario's YAML")
	parallel = flag.Int("parallel", 2, "scenarios compared at once")
)

// runScenario compares one scenario against upstream kube-scheduler.
func runScenario(sc *scenario.Scenario, mode Mode) (Report, error) {
	up := upstream.New()
	defer up.Close()
	b := berthrun.New()
	defer b.Close()
	return Run(sc, b, up, mode)
}

// runAll compares scenarios on a few workers (each has its own clusters and
// upstream scheduler) and returns the reports in input order.
func runAll(t *testing.T, scs []*scenario.Scenario, mode Mode) []Report {
	t.Helper()
	reports := make([]Report, len(scs))
	errs := make([]error, len(scs))
	ForEach(*parallel, len(scs), func(i int) { reports[i], errs[i] = runScenario(scs[i], mode) })
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", scs[i].Name, err)
		}
	}
	return reports
}

func smallSeeds() []uint64 {
	if *oneSeed >= 0 {
		return []uint64{uint64(*oneSeed)}
	}
	n := *seeds
	if n == 0 {
		n = 200
		if *long {
			n = 3000
		}
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i)
	}
	return out
}

// TestDifferential runs small generated scenarios at percentageOfNodesToScore
// 100 through berth and upstream and compares everything, per node and per
// plugin. Every disagreement must become a file in ../regressions.
func TestDifferential(t *testing.T) {
	var scs []*scenario.Scenario
	for _, seed := range smallSeeds() {
		sc := generator.Small(seed)
		if *oneSeed >= 0 {
			writeYAML(t, sc, filepath.Join(*yamlDir, fmt.Sprintf("berth-seed-%d.yaml", seed)))
		}
		scs = append(scs, sc)
	}
	var sum Summary
	for _, rep := range runAll(t, scs, Exact) {
		sum.Add(rep)
	}
	t.Logf("small seeds %d..%d at 100%%: %v", smallSeeds()[0], smallSeeds()[len(smallSeeds())-1], &sum)
	reportDisagreements(t, &sum)
}

// TestDifferentialLarge runs clusters of 100-250 nodes at the adaptive
// percentage and compares outcomes, messages and nodes examined.
func TestDifferentialLarge(t *testing.T) {
	n := 8
	if *long {
		n = 100
	}
	if *oneSeed >= 0 {
		t.Skip("-seed reruns a small seed only")
	}
	var scs []*scenario.Scenario
	for seed := uint64(0); seed < uint64(n); seed++ {
		scs = append(scs, generator.Large(seed))
	}
	var sum Summary
	for _, rep := range runAll(t, scs, Outcome) {
		sum.Add(rep)
	}
	t.Logf("large seeds 0..%d at the adaptive percentage: %v", n-1, &sum)
	reportDisagreements(t, &sum)
}

// TestRegressions replays every scenario saved in ../regressions, each one a
// disagreement that was found and fixed.
func TestRegressions(t *testing.T) {
	files, err := filepath.Glob("../regressions/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := generator.Read(data)
			if err != nil {
				t.Fatal(err)
			}
			mode := Exact
			if sc.PercentageOfNodesToScore != 100 {
				mode = Outcome
			}
			rep, err := runScenario(sc, mode)
			if err != nil {
				t.Fatal(err)
			}
			if rep.First != nil {
				t.Errorf("%v", rep.First)
			}
		})
	}
}

func reportDisagreements(t *testing.T, sum *Summary) {
	t.Helper()
	kinds := map[string][]string{}
	for _, d := range sum.Disagreements {
		k := d.What + " " + d.Plugin
		kinds[k] = append(kinds[k], d.Scenario)
	}
	for _, k := range sortedKeys(kinds) {
		names := kinds[k]
		if len(names) > 10 {
			names = append(names[:10:10], "...")
		}
		t.Logf("%d× %s: %v", len(kinds[k]), k, names)
	}
	for i, d := range sum.Disagreements {
		if i == 5 {
			t.Errorf("... and %d more", len(sum.Disagreements)-i)
			break
		}
		t.Errorf("%v", d)
	}
}

func writeYAML(t *testing.T, sc *scenario.Scenario, path string) {
	t.Helper()
	data, err := generator.YAML(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
