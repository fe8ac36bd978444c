package diff

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/berth-sim/berth/karpenter-conformance/berthrun"
	"github.com/berth-sim/berth/karpenter-conformance/scenario"
	"github.com/berth-sim/berth/karpenter-conformance/upstream"
)

// TestRegressions replays ../regressions on both sides and logs each verdict:
// the files are the known disagreement classes, so a file that starts to
// agree means a class was fixed (on either side) and should be retired.
func TestRegressions(t *testing.T) {
	files, err := filepath.Glob("../regressions/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no regression files: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scenario.Load(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		b, err := berthrun.Run(sc)
		if err != nil {
			t.Fatalf("%s: berth: %v", f, err)
		}
		outs, err := upstream.Outcomes(sc, 3)
		if err != nil {
			t.Fatalf("%s: upstream: %v", f, err)
		}
		var results []*scenario.Result
		for _, o := range outs {
			results = append(results, o.Result)
		}
		if v := Compare(b, results); v.Agree {
			t.Logf("%s: now AGREES; retire it and its known seeds", filepath.Base(f))
		} else {
			t.Logf("%s: disagrees as recorded: %s", filepath.Base(f), v.First)
		}
	}
}
