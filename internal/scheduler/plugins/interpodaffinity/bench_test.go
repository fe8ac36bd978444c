package interpodaffinity

import (
	"testing"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	pt "github.com/berth-sim/berth/internal/scheduler/plugins/plugintest"
)

// BenchmarkCycle runs one scheduling cycle's worth of this plugin for a pod
// with hostname anti-affinity on 5,000 nodes holding 10,000 pods: PreFilter,
// Filter on the 500 nodes upstream would examine, PreScore and Score on them.
func BenchmarkCycle(b *testing.B) {
	pt.BenchCycle(b, func(h framework.Handle) pt.CyclePlugin { return New(h) })
}
