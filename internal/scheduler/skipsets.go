package scheduler

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// skipSets hands out the cycle state's sets of skipped plugins. Almost
// every cycle of a Sync skips the same plugins, so rather than a new map
// per cycle each distinct set (a bit per plugin of the profile's PreFilter
// or PreScore list) is built once and shared by the cycles that skip
// exactly those plugins, with the per-Filter-plugin flags derived from it
// (docs/scheduler.md#session-24-round-2-sched2). Shared sets are never
// written: the runtime only writes a set it is building, and a cycle that
// must change one (explain.go) makes its own.
type skipSets struct {
	filter map[uint64]*filterSkipSet
	score  map[uint64]map[string]struct{}
}

// filterSkipSet is one set of skipped PreFilter plugins and, for the
// profile's Filter plugins in order, whether each is skipped.
type filterSkipSet struct {
	names map[string]struct{}
	flags []bool
}

// maxSkipBits bounds the plugins a mask can describe; a longer list goes
// without sharing.
const maxSkipBits = 64

// filterSkipSet returns the shared set for the PreFilter plugins in mask.
func (fw *Framework) filterSkipSet(mask uint64) *filterSkipSet {
	if set, ok := fw.skips.filter[mask]; ok {
		return set
	}
	names := map[string]struct{}{}
	for i, pl := range fw.preFilter {
		if mask&(1<<i) != 0 {
			names[pl.Name()] = struct{}{}
		}
	}
	flags := make([]bool, len(fw.filter))
	for i, pl := range fw.filter {
		_, flags[i] = names[pl.Name()]
	}
	set := &filterSkipSet{names: names, flags: flags}
	if fw.skips.filter == nil {
		fw.skips.filter = map[uint64]*filterSkipSet{}
	}
	fw.skips.filter[mask] = set
	return set
}

// scoreSkipSet returns the shared set for the PreScore plugins in mask.
func (fw *Framework) scoreSkipSet(mask uint64) map[string]struct{} {
	if set, ok := fw.skips.score[mask]; ok {
		return set
	}
	names := map[string]struct{}{}
	for i, pl := range fw.preScore {
		if mask&(1<<i) != 0 {
			names[pl.Name()] = struct{}{}
		}
	}
	if fw.skips.score == nil {
		fw.skips.score = map[uint64]map[string]struct{}{}
	}
	fw.skips.score[mask] = names
	return names
}

// setFilterSkips records the PreFilter plugins in mask as skipped.
func (fw *Framework) setFilterSkips(state *framework.CycleState, mask uint64) {
	set := fw.filterSkipSet(mask)
	state.SkipFilterPlugins, state.FilterSkips = set.names, set.flags
}
