// Package regressions holds scenarios on which berth once differed from
// the genuine cluster-autoscaler (ca-conformance/genuine), reduced to a
// few objects, with the answer the genuine autoscaler gives on every run.
// Unlike cases/, they restate no upstream unit test: their source is the
// genuine run that found the difference (README, "The genuine
// autoscaler"). CI holds berth to them (diff.CheckRegressions); the opt-in
// genuine run holds the genuine autoscaler to them too.
package regressions

import (
	"embed"
	"fmt"
	"path"
	"sort"

	"github.com/berth-sim/berth/ca-conformance/cases"
	"github.com/berth-sim/berth/ca-conformance/scenario"
)

//go:embed *.yaml
var files embed.FS

// All loads every regression, sorted by file name.
func All() ([]cases.Named, error) {
	entries, err := files.ReadDir(".")
	if err != nil {
		return nil, err
	}
	var out []cases.Named
	for _, e := range entries {
		if path.Ext(e.Name()) != ".yaml" {
			continue
		}
		data, err := files.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		c, err := scenario.ParseCase(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, cases.Named{File: e.Name(), Case: *c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}
