package defaultpreemption

import (
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// PrefixFilterer is implemented by runners (the scheduler's handle) that
// can answer, for a copy of a node with pods removed, the Filter plugins
// that come before the first one whose PreFilter state the extensions
// (AddPod/RemovePod) change. decided is true when one of them rejects the
// node and no pod is nominated to it: then that rejection is what Filter
// with nominated pods answers on the same node with the state edited by the
// extensions, because those plugins read only their own state, which the
// extensions leave alone.
//
// RunFilterPluginsAfterPrefix is Filter with nominated pods on a node that
// RunFilterPluginsBeforeExtensions decided nothing for: with no pod
// nominated to the node (ok true) the plugins ahead of the extensions'
// passed, and the extensions' edits do not reach them, so only the rest
// run. ok is false when pods are nominated to the node.
type PrefixFilterer interface {
	RunFilterPluginsBeforeExtensions(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) (st *framework.Status, decided bool)
	RunFilterPluginsAfterPrefix(state *framework.CycleState, pod *framework.PodInfo, nodeInfo *framework.NodeInfo) (st *framework.Status, ok bool)
}

// SelectVictims is SelectVictimsOnNode(state.Clone(), pod, ni.Clone(),
// pdbs), with a cheaper verdict first when prefix allows it and the runner
// is a PrefixFilterer. SelectVictimsOnNode removes every lower-priority pod,
// and if Filter then rejects the node it returns that status. When a plugin
// ahead of the extensions' plugins already rejects the node without those
// pods (Insufficient cpu, ports in use), that is the status, and the cycle
// state is neither copied nor edited (docs/scheduler.md, "Copy-on-write
// cycle state"). Otherwise the same node copy goes on: the state is copied
// and the extensions told of each removed pod. They are told after all the
// pods left the copy rather than one by one, which is the same to them: the
// extensions read the node object, not its pods.
// prefix must be false when the extensions could fail (a PreFilter that
// did not run to the end), as the full computation then returns their error.
func (pl *DefaultPreemption) SelectVictims(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo, pdbs []*policyv1.PodDisruptionBudget, prefix bool) ([]*v1.Pod, int, *framework.Status) {
	pf, ok := pl.runner.(PrefixFilterer)
	if !ok || !prefix {
		return pl.SelectVictimsOnNode(state.Clone(), pod, ni.Clone(), pdbs)
	}
	// The copy without the lower-priority pods, made in one pass, or the
	// one an earlier pod of the same priority had made of the unchanged
	// node (trials.go); a shared copy is only read until it fits.
	prio := corev1helpers.PodPriority(pod.Pod)
	trial, potential, shared := pl.trials.get(pl.handle, ni, prio)
	// A copy made here and only read is kept for later pods.
	keep := func() {
		if !shared {
			pl.trials.put(ni, prio, trial, potential)
		}
	}
	if len(potential) == 0 {
		return nil, 0, framework.NewStatus(framework.UnschedulableAndUnresolvable, MsgNoVictims)
	}
	if st, decided := pf.RunFilterPluginsBeforeExtensions(state, pod, trial); decided {
		keep()
		return nil, 0, st
	}
	edited := state.Clone()
	for _, p := range potential {
		if st := pl.runner.RunPreFilterExtensionRemovePod(edited, pod, p, trial); !st.IsSuccess() {
			return nil, 0, asError(st)
		}
	}
	st, ok := pf.RunFilterPluginsAfterPrefix(edited, pod, trial)
	if !ok {
		st = pl.runner.RunFilterPluginsWithNominatedPods(edited, pod, trial)
	}
	if !st.IsSuccess() {
		keep()
		return nil, 0, st
	}
	if shared {
		// The reprieves add pods back to the copy and sort the list.
		trial, potential = trial.Clone(), append([]*framework.PodInfo(nil), potential...)
	}
	return pl.reprieveVictims(edited, pod, trial, potential, pdbs)
}
