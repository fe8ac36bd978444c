package tainteviction

import (
	"testing"

	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/sim"
)

// TestScenarios runs the walk-throughs in testdata (see
// controllertest.RunScenarios). Regenerate with -rewrite and review the diff.
func TestScenarios(t *testing.T) {
	controllertest.RunScenarios(t, "testdata", func() []sim.Controller {
		return []sim.Controller{controllertest.Binder{}, kubelet.New(), New()}
	})
}
