// Package berthrun is berth's side of the cluster-autoscaler conformance
// test: one autoscaler decision (a scale-up for the pending pods, then a
// scale-down pass) on a scenario.
//
// berth's autoscaler is not wired yet. Wiring it is one function: replace
// Run's body (or set Default) with code that builds a cluster state from the
// scenario, runs berth's autoscaler once at the scenario's instant and fills
// a scenario.Result. diff.CheckCases then compares it with every case.
package berthrun

import (
	"errors"

	"github.com/berth-sim/berth/ca-conformance/scenario"
)

// Runner decides on a scenario.
type Runner interface {
	Run(sc *scenario.Scenario) (*scenario.Result, error)
}

// ErrNotWired is what the stub returns until berth's autoscaler lands.
var ErrNotWired = errors.New("berth's cluster-autoscaler is not wired into ca-conformance yet")

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(sc *scenario.Scenario) (*scenario.Result, error)

// Run calls f.
func (f RunnerFunc) Run(sc *scenario.Scenario) (*scenario.Result, error) { return f(sc) }

// Default is berth's runner: the stub for now.
var Default Runner = RunnerFunc(Run)

// Run is berth's autoscaler on sc. The stub: nothing to run yet.
func Run(sc *scenario.Scenario) (*scenario.Result, error) {
	return nil, ErrNotWired
}
