package disruption_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/berth-sim/berth/internal/app"
	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/controllertest"
	"github.com/berth-sim/berth/internal/sim"
	"github.com/berth-sim/berth/internal/view"
)

// TestScenarios runs the disruption walk-throughs in testdata with every
// controller berth runs (controllertest.RunScenarios; `region` and
// `nodeclaims` are extra). Regenerate with -rewrite and review the diff.
func TestScenarios(t *testing.T) {
	controllertest.RunScenariosWith(t, "testdata", map[string]controllertest.Directive{
		// region names the cluster's AWS region (a ClusterConfig would).
		"region": func(s *cluster.State, d *datadriven.TestData) (string, error) {
			s.Info.Region = strings.TrimSpace(d.CmdArgs[0].Key)
			return "", nil
		},
		"nodeclaims": func(s *cluster.State, d *datadriven.TestData) (string, error) {
			var b strings.Builder
			err := view.Get(&b, s, view.GetOptions{Args: []string{"nodeclaims"}})
			return b.String(), err
		},
	}, func() []sim.Controller { return app.Controllers(nil) })
}
