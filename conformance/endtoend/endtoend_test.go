package endtoend

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/berth-sim/berth/conformance/diff"
	"github.com/berth-sim/berth/conformance/generator"
)

var (
	seeds    = flag.Int("e2e-seeds", 60, "number of generated end-to-end scenarios")
	oneSeed  = flag.Int64("e2e-seed", -1, "rerun only this seed and write its manifest to -e2e-dir")
	fileDir  = flag.String("e2e-dir", os.TempDir(), "where -e2e-seed writes the manifest")
	parallel = flag.Int("e2e-parallel", 2, "scenarios compared at once")
)

// TestEndToEnd applies generated multi-document manifests through berth's
// apply path and compares every pod's first scheduling attempt, and the
// order in which pods reach the scheduler, with upstream kube-scheduler.
func TestEndToEnd(t *testing.T) {
	var list []uint64
	if *oneSeed >= 0 {
		list = []uint64{uint64(*oneSeed)}
	} else {
		for i := 0; i < *seeds; i++ {
			list = append(list, uint64(i))
		}
	}
	reports := make([]diff.Report, len(list))
	errs := make([]error, len(list))
	diff.ForEach(*parallel, len(list), func(i int) { reports[i], errs[i] = runSeed(t, list[i]) })
	var sum diff.Summary
	for i, rep := range reports {
		if errs[i] != nil {
			t.Errorf("seed %d: %v", list[i], errs[i])
			continue
		}
		sum.Add(rep)
	}
	t.Logf("end-to-end seeds %d..%d: %v", list[0], list[len(list)-1], &sum)
	for i, d := range sum.Disagreements {
		if i < 5 {
			t.Errorf("%v", d)
		} else {
			t.Logf("%v", d)
		}
	}
	if n := len(sum.Disagreements); n > 5 {
		t.Errorf("... and %d more (logged above)", n-5)
	}
}

func runSeed(t *testing.T, seed uint64) (diff.Report, error) {
	sc := generator.Small(seed)
	file, err := File(sc, seed)
	if err != nil {
		return diff.Report{}, err
	}
	if *oneSeed >= 0 {
		path := filepath.Join(*fileDir, fmt.Sprintf("berth-e2e-seed-%d.yaml", seed))
		if err := os.WriteFile(path, file, 0o644); err != nil {
			return diff.Report{}, err
		}
		t.Logf("wrote %s", path)
	}
	return Run(sc.Name, file, sc.KubernetesVersion, t.TempDir())
}
