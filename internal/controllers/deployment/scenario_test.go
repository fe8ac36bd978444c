package deployment

import (
	"testing"

	"github.com/berth-sim/berth/internal/controllers/controllertest"
)

// TestScenarios runs the walk-throughs in testdata (see
// controllertest.RunScenarios). Regenerate with -rewrite and review the diff.
func TestScenarios(t *testing.T) {
	controllertest.RunScenarios(t, "testdata", controllers)
}
