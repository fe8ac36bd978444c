package defaultpreemption

import (
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// trialCopies keeps, for one snapshot, the copies SelectVictims makes of a
// node without its pods below a priority, by node object and priority
// (docs/scheduler.md#failed-cycles-by-position). Every pod that fits
// nowhere runs the dry run over hundreds of nodes, and pods of a few
// priorities meet the same unchanged nodes again and again: the copy is a
// function of the node's pods and the priority, so one made for an
// earlier pod serves as long as the node has not changed. A copy handed
// out shared is only read (Filter, the PreFilter extensions); the
// computation that edits it takes a copy of its own. A node changes only
// by AddPod/RemovePod, which move its Generation, or is replaced by
// another NodeInfo (a preemption, which also starts a new snapshot).
type trialCopies struct {
	snapshot uint64
	valid    bool
	byKey    map[trialKey]*trialCopy
}

type trialKey struct {
	node *framework.NodeInfo
	prio int32
}

type trialCopy struct {
	gen       int64
	node      *framework.NodeInfo
	potential []*framework.PodInfo
}

// maxTrialCopies bounds the copies kept per snapshot.
const maxTrialCopies = 1 << 15

// get returns ni without its pods of priority below prio, and those pods
// in ni's order. shared is true when the copy may be handed out again: the
// caller must not change it or the list.
func (t *trialCopies) get(h framework.Handle, ni *framework.NodeInfo, prio int32) (trial *framework.NodeInfo, potential []*framework.PodInfo, shared bool) {
	drop := func(p *framework.PodInfo) bool { return corev1helpers.PodPriority(p.Pod) < prio }
	log, ok := h.(helper.PodLog)
	if !ok {
		t.valid = false
		trial, potential = ni.CloneWithout(drop)
		return trial, potential, false
	}
	id, _ := log.AddedPods()
	if !t.valid || id != t.snapshot || len(t.byKey) >= maxTrialCopies {
		t.snapshot, t.valid, t.byKey = id, true, map[trialKey]*trialCopy{}
	}
	key := trialKey{ni, prio}
	if c := t.byKey[key]; c != nil && c.gen == ni.Generation {
		return c.node, c.potential, true
	}
	trial, potential = ni.CloneWithout(drop)
	t.byKey[key] = &trialCopy{gen: ni.Generation, node: trial, potential: potential}
	return trial, potential, true
}
