package scheduler

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/defaultpreemption"
)

var _ defaultpreemption.PrefixFilterer = (*handle)(nil)

// RunFilterPluginsBeforeExtensions implements defaultpreemption.PrefixFilterer:
// the Filter plugins ahead of the first one whose PreFilter extensions are
// active run on ni with the unedited state. A rejection among them decides
// when no pod is nominated to the node (filterWithNominated would otherwise
// add pods first).
func (h *handle) RunFilterPluginsBeforeExtensions(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo) (*framework.Status, bool) {
	if len(h.sched.nominatedFor(ni.Node)) > 0 {
		return nil, false
	}
	fw := h.fw
	skip := fw.filterSkips(state)
	if st := fw.runFilterRange(state, pod, ni, skip, 0, fw.firstExtensionFilter(state, skip)); st != nil {
		return st, true
	}
	return nil, false
}

// RunFilterPluginsAfterPrefix implements defaultpreemption.PrefixFilterer:
// Filter with nominated pods on ni once RunFilterPluginsBeforeExtensions
// decided nothing there, for a node no pod is nominated to. The plugins
// ahead of the first extension plugin passed on ni then, and the
// extensions' edits do not reach them, so only the plugins from that one
// on run. ok is false when pods are nominated to ni.
func (h *handle) RunFilterPluginsAfterPrefix(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo) (*framework.Status, bool) {
	if len(h.sched.nominatedFor(ni.Node)) > 0 {
		return nil, false
	}
	fw := h.fw
	skip := fw.filterSkips(state)
	return fw.runFilterRange(state, pod, ni, skip, fw.firstExtensionFilter(state, skip), len(fw.filter)), true
}

// firstExtensionFilter is the position of the first Filter plugin (not
// skipped) whose PreFilter plugin has extensions, or len(fw.filter).
func (fw *Framework) firstExtensionFilter(state *framework.CycleState, skip []bool) int {
	for i, pl := range fw.filter {
		if skip[i] {
			continue
		}
		for _, pre := range fw.preFilter {
			if pre.Name() != pl.Name() || pre.PreFilterExtensions() == nil {
				continue
			}
			if _, skipped := state.SkipFilterPlugins[pre.Name()]; !skipped {
				return i
			}
		}
	}
	return len(fw.filter)
}
