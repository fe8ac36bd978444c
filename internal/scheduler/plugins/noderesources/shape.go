package noderesources

import (
	"encoding/binary"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// AppendScoreShape implements framework.NodeLocalScorePlugin: LeastAllocated
// reads the node's non-zero requests and allocatable, and from the pod the
// cpu and memory request PreFilter recorded.
func (f *Fit) AppendScoreShape(state *framework.CycleState, pod *framework.PodInfo, key []byte) ([]byte, bool) {
	cpu, mem := f.scoreRequestOf(state, pod)
	return binary.AppendVarint(binary.AppendVarint(key, cpu), mem), true
}

// AppendScoreShape implements framework.NodeLocalScorePlugin: the balance
// reads the node's requests and allocatable, and from the pod the cpu and
// memory PreScore recorded (the delta switch is the plugin's own, fixed).
func (b *BalancedAllocation) AppendScoreShape(state *framework.CycleState, _ *framework.PodInfo, key []byte) ([]byte, bool) {
	s, ok := state.Read(balancedPreScoreKey).(*balancedState)
	if !ok {
		return key, false
	}
	return binary.AppendVarint(binary.AppendVarint(key, s.cpu), s.memory), true
}

// AppendFilterShape implements framework.NodeLocalFilterPlugin for pods
// without scalar resources: Filter then reads the node's allocatable,
// requests and pod count, and from the pod its cpu, memory and ephemeral
// storage request. Its rejections come from the shared table (never
// changed once made).
func (f *Fit) AppendFilterShape(state *framework.CycleState, pod *framework.PodInfo, key []byte) ([]byte, bool) {
	req := &pod.Requests
	if s, ok := state.Read(preFilterStateKey).(*preFilterState); ok {
		if s.scalars != nil {
			return key, false
		}
		req = &s.Resource
	}
	if len(req.ScalarResources) > 0 {
		return key, false
	}
	key = binary.AppendVarint(key, req.MilliCPU)
	key = binary.AppendVarint(key, req.Memory)
	return binary.AppendVarint(key, req.EphemeralStorage), true
}
