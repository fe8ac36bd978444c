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

	"github.com/berth-sim/berth/ca-conformance/cases"
)

//go:embed *.yaml
var files embed.FS

// All loads every regression, sorted by file name.
func All() ([]cases.Named, error) { return cases.Load(files) }
