// Package dynamicresources is the DynamicResources (DRA) plugin as far as it
// shows for pods without resource claims, which is what berth models: it
// skips Filter, scores 0, and its PostFilter adds "no new claims to
// deallocate" to every FailedScheduling message (1.34+). When an earlier
// PreFilter rejected the pod outright, its PostFilter finds no cycle state
// and fails with "not found", which upstream prints (docs/scheduler.md#dynamicresources-quirks-134-and-later).
package dynamicresources

import (
	"errors"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// Name is the plugin's name in the profile.
const Name = "DynamicResources"

// Messages as upstream prints them.
const (
	MsgNoClaimsToDeallocate = "no new claims to deallocate"
	MsgStateNotFound        = "not found"
)

const stateKey framework.StateKey = Name

// DynamicResources is the plugin.
type DynamicResources struct{}

// New builds the plugin.
func New(framework.Handle) framework.Plugin { return &DynamicResources{} }

func (*DynamicResources) Name() string { return Name }

type stateData struct {
	claims int
}

func (s *stateData) Clone() framework.StateData { return s }

// PreFilter records the pod's claims. Claims are not modelled (no
// ResourceClaim objects exist in berth), so Filter is always skipped.
func (pl *DynamicResources) PreFilter(state *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	state.Write(stateKey, &stateData{claims: len(pod.Pod.Spec.ResourceClaims)})
	return nil, framework.NewStatus(framework.Skip)
}

// PreFilterExtensions: nothing to update.
func (pl *DynamicResources) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter passes every node (it only runs if PreFilter did not skip).
func (pl *DynamicResources) Filter(*framework.CycleState, *framework.PodInfo, *framework.NodeInfo) *framework.Status {
	return nil
}

// PostFilter has nothing to deallocate; without its PreFilter state it errors.
func (pl *DynamicResources) PostFilter(state *framework.CycleState, _ *framework.PodInfo, _ framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	if _, ok := state.Read(stateKey).(*stateData); !ok {
		return nil, framework.AsStatus(errors.New(MsgStateNotFound))
	}
	return nil, framework.NewStatus(framework.Unschedulable, MsgNoClaimsToDeallocate)
}

// Score is 0 for pods without claims; the plugin is not skipped at PreScore.
func (pl *DynamicResources) Score(*framework.CycleState, *framework.PodInfo, *framework.NodeInfo) (int64, *framework.Status) {
	return 0, nil
}

// ScoreExtensions: no normalization.
func (pl *DynamicResources) ScoreExtensions() framework.ScoreExtensions { return nil }

// ScoreNodes is Score over every node (framework.BatchScorePlugin): 0 each.
func (pl *DynamicResources) ScoreNodes(_ *framework.CycleState, _ *framework.PodInfo, _ []*framework.NodeInfo, scores framework.NodeScoreList) *framework.Status {
	for i := range scores {
		scores[i].Score = 0
	}
	return nil
}

// AppendScoreShape implements framework.NodeLocalScorePlugin: the score
// reads nothing, so every pod has the same (empty) shape.
func (pl *DynamicResources) AppendScoreShape(_ *framework.CycleState, _ *framework.PodInfo, key []byte) ([]byte, bool) {
	return key, true
}
