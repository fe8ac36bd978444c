// Package cases holds the expected results: scenarios whose outcome the
// cluster-autoscaler's own unit tests assert, transcribed into the neutral
// format (one YAML file each, naming the upstream test it restates). They
// stand in for running the genuine autoscaler, which this workplace cannot
// fetch (README, "Why no upstream run").
package cases

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/berth-sim/berth/ca-conformance/scenario"
)

//go:embed *.yaml
var files embed.FS

// Named is a case with its file name.
type Named struct {
	File string
	scenario.Case
}

// All loads every case, sorted by file name.
func All() ([]Named, error) { return Load(files) }

// Load parses every .yaml file at the root of fsys as a case, sorted by
// file name; regressions/ loads its files through it too.
func Load(fsys fs.FS) ([]Named, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var out []Named
	for _, e := range entries {
		if path.Ext(e.Name()) != ".yaml" {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		c, err := scenario.ParseCase(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, Named{File: e.Name(), Case: *c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// Get loads the case in file name (with or without ".yaml").
func Get(name string) (*Named, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].File == name || all[i].File == name+".yaml" {
			return &all[i], nil
		}
	}
	return nil, fmt.Errorf("no case %q", name)
}
