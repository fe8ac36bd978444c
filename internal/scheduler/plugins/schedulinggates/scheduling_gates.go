// Package schedulinggates keeps pods with spec.schedulingGates out of the
// active queue; they are never attempted until every gate is removed.
package schedulinggates

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Name is the plugin's name in the profile.
const Name = "SchedulingGates"

// SchedulingGates is the plugin.
type SchedulingGates struct{}

// New builds the plugin.
func New(framework.Handle) framework.Plugin { return &SchedulingGates{} }

func (*SchedulingGates) Name() string { return Name }

// PreEnqueue parks a gated pod.
func (*SchedulingGates) PreEnqueue(pod *v1.Pod) *framework.Status {
	if len(pod.Spec.SchedulingGates) == 0 {
		return nil
	}
	gates := make([]string, 0, len(pod.Spec.SchedulingGates))
	for _, g := range pod.Spec.SchedulingGates {
		gates = append(gates, g.Name)
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for scheduling gates: %v", gates))
}
