package noderesources

import (
	"fmt"
	"math"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// BalancedAllocationName is NodeResourcesBalancedAllocation's name in the profile.
const BalancedAllocationName = "NodeResourcesBalancedAllocation"

const balancedPreScoreKey framework.StateKey = "PreScore" + BalancedAllocationName

// BalancedAllocation scores how evenly cpu and memory would be used, from the
// actual requests (no non-zero defaults).
type BalancedAllocation struct {
	delta bool
}

// NewBalancedAllocation builds the plugin; from 1.36 it scores the change in
// balance the pod causes instead of the balance with the pod.
func NewBalancedAllocation(h framework.Handle) framework.Plugin {
	return &BalancedAllocation{delta: h.Features().BalancedAllocationDelta}
}

func (*BalancedAllocation) Name() string { return BalancedAllocationName }

type balancedState struct{ cpu, memory int64 }

func (s *balancedState) Clone() framework.StateData { return s }

// PreScore skips best-effort pods: they change no balance.
func (b *BalancedAllocation) PreScore(state *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo) *framework.Status {
	if pod.Requests.MilliCPU == 0 && pod.Requests.Memory == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(balancedPreScoreKey, &balancedState{pod.Requests.MilliCPU, pod.Requests.Memory})
	return nil
}

// Score is the balance with the pod, or (1.36) 50 + (50 + with − without)/2.
func (b *BalancedAllocation) Score(state *framework.CycleState, _ *framework.PodInfo, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, ok := state.Read(balancedPreScoreKey).(*balancedState)
	if !ok {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: not found", balancedPreScoreKey))
	}
	return b.score(s, nodeInfo), nil
}

// ScoreNodes is Score over every node, reading the state once
// (framework.BatchScorePlugin).
func (b *BalancedAllocation) ScoreNodes(state *framework.CycleState, _ *framework.PodInfo, nodes []*framework.NodeInfo, scores framework.NodeScoreList) *framework.Status {
	s, ok := state.Read(balancedPreScoreKey).(*balancedState)
	if !ok && len(nodes) > 0 {
		return framework.AsStatus(fmt.Errorf("reading %q from cycleState: not found", balancedPreScoreKey))
	}
	for i, ni := range nodes {
		scores[i].Score = b.score(s, ni)
	}
	return nil
}

func (b *BalancedAllocation) score(s *balancedState, nodeInfo *framework.NodeInfo) int64 {
	alloc := [2]int64{nodeInfo.Allocatable.MilliCPU, nodeInfo.Allocatable.Memory}
	base := [2]int64{nodeInfo.Requested.MilliCPU, nodeInfo.Requested.Memory}
	with := balanced2(base[0]+s.cpu, base[1]+s.memory, alloc[0], alloc[1])
	if !b.delta {
		return with
	}
	without := balanced2(base[0], base[1], alloc[0], alloc[1])
	const half = framework.MaxNodeScore / 2
	return half + (half+with-without)/2
}

// ScoreExtensions: no normalization.
func (b *BalancedAllocation) ScoreExtensions() framework.ScoreExtensions { return nil }

// balanced2 is (1 − std-dev of the used fractions) × 100 for cpu and
// memory; with two resources the std-dev is half their difference.
// Resources without allocatable are left out. It is upstream's general
// computation over a list of fractions written out for two, the same
// operations in the same order, so the same float results
// (TestBalanced2MatchesBalanced).
func balanced2(reqCPU, reqMem, allocCPU, allocMem int64) int64 {
	var std float64
	if allocCPU != 0 && allocMem != 0 {
		f0 := minOne(float64(reqCPU) / float64(allocCPU))
		f1 := minOne(float64(reqMem) / float64(allocMem))
		std = math.Abs((f0 - f1) / 2)
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}

// minOne is math.Min(1, f) for an f that is not NaN (a quotient of two
// integers with a non-zero divisor): math.Min's special cases are for NaN,
// infinities and signed zeros, and f < 1 keeps a -0 as Min does.
func minOne(f float64) float64 {
	if f < 1 {
		return f
	}
	return 1
}
