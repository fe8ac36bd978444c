package tainttoleration

import (
	"encoding/binary"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// AppendScoreShape implements framework.NodeLocalScorePlugin: the count
// reads the node's taints and the pod's PreferNoSchedule tolerations, every
// field of which the key spells out.
func (pl *TaintToleration) AppendScoreShape(state *framework.CycleState, _ *framework.PodInfo, key []byte) ([]byte, bool) {
	s, ok := state.Read(preScoreStateKey).(*preScoreState)
	if !ok {
		return key, false
	}
	key = binary.AppendUvarint(key, uint64(len(s.tolerationsPreferNoSchedule)))
	return appendTolerationsKey(key, s.tolerationsPreferNoSchedule), true
}
