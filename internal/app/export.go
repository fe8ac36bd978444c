package app

import "fmt"

// Export writes the state as YAML manifests to stdout, or into dir
// (docs/state.md#export).
func (a *App) Export(dir string) error {
	if a.fresh {
		return fmt.Errorf("no cluster state in %s: nothing to export", a.opts.StateDir)
	}
	if dir == "" {
		return a.state.Export(a.opts.Out)
	}
	return a.state.ExportDir(dir)
}
