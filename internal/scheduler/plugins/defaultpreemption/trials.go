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
// in ni's order. shared is true when the copy is one kept for the
// snapshot: the caller must not change it or the list. A copy made here
// is the caller's, to edit or to hand to put once done reading it.
func (t *trialCopies) get(h framework.Handle, ni *framework.NodeInfo, prio int32) (trial *framework.NodeInfo, potential []*framework.PodInfo, shared bool) {
	if log, ok := h.(helper.PodLog); ok {
		id, _ := log.AddedPods()
		if !t.valid || id != t.snapshot || len(t.byKey) >= maxTrialCopies {
			t.snapshot, t.valid = id, true
			if t.byKey == nil {
				t.byKey = map[trialKey]*trialCopy{}
			}
			clear(t.byKey)
		}
		if c := t.byKey[trialKey{ni, prio}]; c != nil && c.gen == ni.Generation {
			return c.node, c.potential, true
		}
	} else {
		t.valid = false
	}
	trial, potential = ni.CloneWithout(func(p *framework.PodInfo) bool { return corev1helpers.PodPriority(p.Pod) < prio })
	return trial, potential, false
}

// put keeps a copy get made of ni, unchanged since, for later pods. Copies
// the reprieves edited are never kept: a dry run that finds candidates
// copies each node once, as it did before copies were kept.
func (t *trialCopies) put(ni *framework.NodeInfo, prio int32, trial *framework.NodeInfo, potential []*framework.PodInfo) {
	if t.valid {
		t.byKey[trialKey{ni, prio}] = &trialCopy{gen: ni.Generation, node: trial, potential: potential}
	}
}
