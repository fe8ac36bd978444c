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
	alloc := [2]int64{nodeInfo.Allocatable.MilliCPU, nodeInfo.Allocatable.Memory}
	base := [2]int64{nodeInfo.Requested.MilliCPU, nodeInfo.Requested.Memory}
	with := balanced([2]int64{base[0] + s.cpu, base[1] + s.memory}, alloc)
	if !b.delta {
		return with, nil
	}
	without := balanced(base, alloc)
	const half = framework.MaxNodeScore / 2
	return half + (half+with-without)/2, nil
}

// ScoreExtensions: no normalization.
func (b *BalancedAllocation) ScoreExtensions() framework.ScoreExtensions { return nil }

// balanced is (1 − std-dev of the used fractions) × 100; with two resources
// the std-dev is half their difference. Resources without allocatable are left out.
func balanced(requested, allocatable [2]int64) int64 {
	var buf [2]float64
	fractions := buf[:0]
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		fractions = append(fractions, math.Min(1, float64(requested[i])/float64(allocatable[i])))
	}
	var std float64
	switch {
	case len(fractions) == 2:
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	case len(fractions) > 2:
		var sum float64
		for _, f := range fractions {
			sum += f
		}
		mean := sum / float64(len(fractions))
		var v float64
		for _, f := range fractions {
			v += (f - mean) * (f - mean)
		}
		std = math.Sqrt(v / float64(len(fractions)))
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}
