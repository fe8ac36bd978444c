package scheduler

import (
	"fmt"
	"sort"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// staticVerdicts caches the verdict of the leading static Filter plugins for
// one pod template, per node: by snapshot position, or by name for nodes
// outside the snapshot list (preemption's copies). A nil status means passed.
type staticVerdicts struct {
	// shared (nil: none) holds the verdicts of the first sharedUpTo static
	// plugins (those before NodeAffinity, which read no label) per keyless
	// node class (keyless maps a snapshot position to it), shared by every
	// template with the same tolerations (nodeclass.go).
	shared     *sharedVerdicts
	keyless    []int32
	sharedUpTo int
	// classOf (nil: per node) maps a snapshot position to its node class;
	// set when the verdict of the static plugins from sharedUpTo up to
	// classUpTo cannot depend on the node's name (nodeclass.go). The static
	// plugins from classUpTo on, when any, are run per node after a class
	// passes.
	classOf   []int32
	classUpTo int
	classDone []bool
	byClass   []*framework.Status
	// done and byPos are made on first use (class-cached templates never
	// need them).
	n      int
	done   []bool
	byPos  []*framework.Status
	byName map[string]*framework.Status
}

// sharedVerdicts is one tolerations' verdicts per keyless class.
type sharedVerdicts struct {
	done []bool
	st   []*framework.Status
}

// newStaticVerdicts returns an empty cache for a snapshot of n nodes.
func newStaticVerdicts(n int) *staticVerdicts {
	return &staticVerdicts{n: n, byName: map[string]*framework.Status{}}
}

// verdict returns the static plugins' status for ni at snapshot position
// pos (-1: not a snapshot node), running them when it is not cached.
func (c *staticVerdicts) verdict(fw *Framework, state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo, skip []bool, pos int) *framework.Status {
	from := 0
	if pos >= 0 && pos < len(c.keyless) {
		k, sh := c.keyless[pos], c.shared
		if !sh.done[k] {
			sh.done[k], sh.st[k] = true, fw.runFilterRange(state, pod, ni, skip, 0, c.sharedUpTo)
		}
		if st := sh.st[k]; st != nil || c.sharedUpTo == fw.staticFilters {
			return st
		}
		from = c.sharedUpTo
	}
	if pos >= 0 && pos < len(c.classOf) {
		k := c.classOf[pos]
		if !c.classDone[k] {
			c.classDone[k], c.byClass[k] = true, fw.runFilterRange(state, pod, ni, skip, from, c.classUpTo)
		}
		if st := c.byClass[k]; st != nil || c.classUpTo == fw.staticFilters {
			return st
		}
		return fw.runFilterRange(state, pod, ni, skip, c.classUpTo, fw.staticFilters)
	}
	if from > 0 {
		return fw.runFilterRange(state, pod, ni, skip, from, fw.staticFilters)
	}
	if pos >= 0 && c.classOf == nil && pos < c.n {
		if c.done == nil {
			c.done, c.byPos = make([]bool, c.n), make([]*framework.Status, c.n)
		}
		if !c.done[pos] {
			c.done[pos], c.byPos[pos] = true, fw.runFilterRange(state, pod, ni, skip, 0, fw.staticFilters)
		}
		return c.byPos[pos]
	}
	st, ok := c.byName[ni.Name()]
	if !ok {
		st = fw.runFilterRange(state, pod, ni, skip, 0, fw.staticFilters)
		c.byName[ni.Name()] = st
	}
	return st
}

// runPreFilterPlugins runs PreFilter in order (docs/scheduler.md#the-cycle): Skip disables the
// plugin's Filter, U&U stops at once, Unschedulable is remembered (the last
// one wins) while the rest still run, results are intersected. It returns
// the merged result, the rejection if any, and the plugins that narrowed nodes.
func (fw *Framework) runPreFilterPlugins(state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status, []string) {
	// The skipped plugins are noted in a mask and the cycle gets the
	// shared set for it on the way out (skipsets.go); no PreFilter plugin
	// reads the set.
	shared := len(fw.preFilter) <= maxSkipBits
	if !shared {
		state.SkipFilterPlugins = map[string]struct{}{}
		state.FilterSkips = nil
	}
	r, st, narrowing, mask := fw.preFilterLoop(state, pod, nodes, shared)
	if shared {
		fw.setFilterSkips(state, mask)
	}
	return r, st, narrowing
}

// preFilterLoop is runPreFilterPlugins' loop; a skipped plugin is set in
// the mask when shared, else added to the state's own set.
func (fw *Framework) preFilterLoop(state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo, shared bool) (*framework.PreFilterResult, *framework.Status, []string, uint64) {
	var result *framework.PreFilterResult
	var rejection *framework.Status
	var narrowing []string
	var mask uint64
	for k, pl := range fw.preFilter {
		r, s := pl.PreFilter(state, pod, nodes)
		switch {
		case s.IsSkip():
			if shared {
				mask |= 1 << k
			} else {
				state.SkipFilterPlugins[pl.Name()] = struct{}{}
			}
			continue
		case s.Code() == framework.UnschedulableAndUnresolvable:
			return nil, s.WithPlugin(pl.Name()), narrowing, mask
		case s.Code() == framework.Unschedulable:
			rejection = s.WithPlugin(pl.Name())
			continue
		case !s.IsSuccess():
			return nil, framework.AsStatus(fmt.Errorf("running PreFilter plugin %q: %s", pl.Name(), s.Message())).WithPlugin(pl.Name()), narrowing, mask
		}
		if r.AllNodes() {
			continue
		}
		narrowing = append(narrowing, pl.Name())
		result = mergePreFilterResults(result, r)
		if len(result.NodeNames) == 0 {
			sort.Strings(narrowing)
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", narrowing)
			if len(narrowing) == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", narrowing[0])
			}
			return result, framework.NewStatus(framework.UnschedulableAndUnresolvable, msg), narrowing, mask
		}
	}
	sort.Strings(narrowing)
	return result, rejection, narrowing, mask
}

func mergePreFilterResults(a, b *framework.PreFilterResult) *framework.PreFilterResult {
	if a.AllNodes() {
		return b
	}
	out := &framework.PreFilterResult{NodeNames: map[string]struct{}{}}
	for n := range a.NodeNames {
		if _, ok := b.NodeNames[n]; ok {
			out.NodeNames[n] = struct{}{}
		}
	}
	return out
}

// runFilterPlugins runs Filter in order and stops at the first rejection,
// whose status (tagged with the plugin) becomes the node's. With cache set,
// the leading static plugins' verdict is taken from it.
// pos is ni's position in the snapshot list, or -1.
func (fw *Framework) runFilterPlugins(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo, skip []bool, cache *staticVerdicts, pos int) *framework.Status {
	if skip == nil {
		skip = fw.filterSkips(state)
	}
	from := 0
	if cache != nil && fw.staticFilters > 0 {
		if st := cache.verdict(fw, state, pod, ni, skip, pos); st != nil {
			return st
		}
		from = fw.staticFilters
	}
	if fw.fmemo.active(state, ni, pos) {
		return fw.fmemo.runFilterRange(fw, state, pod, ni, skip, from, len(fw.filter), pos)
	}
	return fw.runFilterRange(state, pod, ni, skip, from, len(fw.filter))
}

// filterSkips turns the cycle's skipped plugins into a flag per Filter plugin.
// It is derived once per cycle: SkipFilterPlugins is only written by
// PreFilter, which resets FilterSkips.
func (fw *Framework) filterSkips(state *framework.CycleState) []bool {
	if state.FilterSkips != nil && len(state.FilterSkips) == len(fw.filter) {
		return state.FilterSkips
	}
	skip := make([]bool, len(fw.filter))
	for i, pl := range fw.filter {
		_, skip[i] = state.SkipFilterPlugins[pl.Name()]
	}
	state.FilterSkips = skip
	return skip
}

func (fw *Framework) runFilterRange(state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo, skip []bool, from, to int) *framework.Status {
	for i := from; i < to; i++ {
		if skip[i] {
			continue
		}
		pl := fw.filter[i]
		s := pl.Filter(state, pod, ni)
		if s.IsSuccess() {
			continue
		}
		if !s.IsRejected() {
			return fw.filterError(pl, s)
		}
		return s.WithPlugin(pl.Name())
	}
	return nil
}

// filterError is the error status of a Filter plugin that failed with s.
func (fw *Framework) filterError(pl framework.FilterPlugin, s *framework.Status) *framework.Status {
	return framework.AsStatus(fmt.Errorf("running %q filter plugin: %s", pl.Name(), s.Message())).WithPlugin(pl.Name())
}

// runPreFilterExtensionRemovePod updates every active PreFilter state for a
// pod removed from ni (preemption's what-if).
func (fw *Framework) runPreFilterExtensionRemovePod(state *framework.CycleState, pod, removed *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return fw.runPreFilterExtensions(state, "RemovePod", func(ext framework.PreFilterExtensions) *framework.Status {
		return ext.RemovePod(state, pod, removed, ni)
	})
}

// runPreFilterExtensions calls op (named in the error) on the extensions of
// every PreFilter plugin that did not skip, stopping at the first failure.
func (fw *Framework) runPreFilterExtensions(state *framework.CycleState, op string, call func(framework.PreFilterExtensions) *framework.Status) *framework.Status {
	for _, pl := range fw.preFilter {
		if _, skip := state.SkipFilterPlugins[pl.Name()]; skip {
			continue
		}
		ext := pl.PreFilterExtensions()
		if ext == nil {
			continue
		}
		if s := call(ext); !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running %s on PreFilter plugin %q: %s", op, pl.Name(), s.Message()))
		}
	}
	return nil
}

// runPostFilterPlugins (docs/scheduler.md#postfilter): Success stops with no message, U&U or
// Error stop with theirs, Unschedulable reasons are collected and joined.
func (fw *Framework) runPostFilterPlugins(state *framework.CycleState, pod *framework.PodInfo, m framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	var reasons []string
	var result *framework.PostFilterResult
	for _, pl := range fw.postFilter {
		r, s := pl.PostFilter(state, pod, m)
		switch {
		case s.IsSuccess():
			return r, s
		case s.Code() == framework.UnschedulableAndUnresolvable:
			return r, s.WithPlugin(pl.Name())
		case !s.IsRejected():
			return nil, s.WithPlugin(pl.Name())
		}
		if r != nil {
			result = r
		}
		reasons = append(reasons, s.Reasons()...)
	}
	return result, framework.NewStatus(framework.Unschedulable, reasons...)
}

// runScorePlugins runs PreScore, Score and NormalizeScore and returns the
// weighted totals per node (same order as nodes). With keep set it also
// returns each plugin's normalized scores; otherwise the buffers are reused
// by the next cycle. sn (nil: none) supplies the nodes' names by position.
//
// Plugins that implement framework.BatchScorePlugin score the whole list in
// one call; the others node by node. A score list's names are only filled
// when kept or when the plugin's normalizer may read them
// (docs/scheduler.md#scoring-a-cycle-in-one-call).
func (fw *Framework) runScorePlugins(state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo, keep bool, sn *Snapshot) ([]int64, map[string]framework.NodeScoreList, *framework.Status) {
	// As in PreFilter, the skipped plugins go into a mask and the state
	// gets the shared set (skipsets.go).
	shared := len(fw.preScore) <= maxSkipBits
	if shared {
		state.SkipScorePlugins = nil
	} else {
		state.SkipScorePlugins = map[string]struct{}{}
	}
	var mask uint64
	for k, pl := range fw.preScore {
		s := pl.PreScore(state, pod, nodes)
		if s.IsSkip() {
			if shared {
				mask |= 1 << k
			} else {
				state.SkipScorePlugins[pl.Name()] = struct{}{}
			}
			continue
		}
		if !s.IsSuccess() {
			if shared {
				state.SkipScorePlugins = fw.scoreSkipSet(mask)
			}
			return nil, nil, framework.AsStatus(fmt.Errorf("running PreScore plugin %q: %s", pl.Name(), s.Message()))
		}
	}
	if shared {
		state.SkipScorePlugins = fw.scoreSkipSet(mask)
	}
	var memo *shapeScores
	if !keep && sn != nil && !fw.plainScores {
		memo = fw.memo.prepare(fw, state, pod, nodes, sn)
	}
	totals := fw.totalsBuffer(len(nodes), keep)
	if memo != nil {
		fw.memo.addSums(memo, totals)
		if fw.memo.verify != nil {
			fw.memo.verify(-1, state, pod, nodes, totals)
		}
	}
	var names []string
	var perPlugin map[string]framework.NodeScoreList
	if keep {
		perPlugin = map[string]framework.NodeScoreList{}
	}
	for k, ws := range fw.score {
		name := ws.plugin.Name()
		if _, skip := state.SkipScorePlugins[name]; skip {
			continue
		}
		slot := -1
		if memo != nil {
			if slot = fw.memo.slotOf(k); slot == -2 {
				// In the memo's sums, added above.
				continue
			}
		}
		scores := fw.scoreBuffer(k, len(nodes), keep)
		ext := ws.plugin.ScoreExtensions()
		if keep || readsNames(ext, state) {
			// Each plugin's list names the nodes; read the names once, not
			// once per plugin.
			if names == nil {
				names = fw.nodeNames(nodes, sn)
			}
			for i := range scores {
				scores[i].Name = names[i]
			}
		}
		b, batch := ws.plugin.(framework.BatchScorePlugin)
		switch {
		case slot >= 0:
			fw.memo.scores(memo, slot, scores)
			if fw.memo.verify != nil {
				fw.memo.verify(k, state, pod, nodes, scores)
			}
		case batch:
			if s := b.ScoreNodes(state, pod, nodes, scores); !s.IsSuccess() {
				return nil, nil, framework.AsStatus(fmt.Errorf("running Score plugin %q: %s", name, s.Message()))
			}
		default:
			for i, ni := range nodes {
				v, s := ws.plugin.Score(state, pod, ni)
				if !s.IsSuccess() {
					return nil, nil, framework.AsStatus(fmt.Errorf("running Score plugin %q: %s", name, s.Message()))
				}
				scores[i].Score = v
			}
		}
		if ext != nil {
			if s := ext.NormalizeScore(state, pod, scores); !s.IsSuccess() {
				return nil, nil, framework.AsStatus(fmt.Errorf("running Normalize on Score plugin %q: %s", name, s.Message()))
			}
		}
		for i := range scores {
			v := scores[i].Score
			if v < framework.MinNodeScore || v > framework.MaxNodeScore {
				return nil, nil, framework.AsStatus(fmt.Errorf("applying score defaultWeights on Score plugins: plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing",
					name, v, framework.MinNodeScore, framework.MaxNodeScore))
			}
			totals[i] += v * ws.weight
		}
		if keep {
			perPlugin[name] = scores
		}
	}
	if len(fw.score) == 0 {
		for i := range totals {
			totals[i] = 1
		}
	}
	return totals, perPlugin, nil
}

// readsNames tells whether ext's NormalizeScore may read the score list's
// names this cycle.
func readsNames(ext framework.ScoreExtensions, state *framework.CycleState) bool {
	if ext == nil {
		return false
	}
	if nb, ok := ext.(framework.NameBlindNormalizer); ok {
		return nb.NormalizeReadsNames(state)
	}
	return true
}

// nodeNames returns the names of nodes in the framework's reused buffer,
// from the snapshot's dense list where a node is at its position there
// (not touching the Node objects), else from the node.
func (fw *Framework) nodeNames(nodes []*framework.NodeInfo, sn *Snapshot) []string {
	if cap(fw.names) < len(nodes) {
		fw.names = make([]string, len(nodes))
	}
	names := fw.names[:len(nodes)]
	for i, ni := range nodes {
		if sn != nil {
			names[i] = sn.nameAt(sn.position(ni), ni)
		} else {
			names[i] = ni.Name()
		}
	}
	return names
}

// totalsBuffer returns n zeroed totals, reusing the previous cycle's
// array unless the caller keeps them.
func (fw *Framework) totalsBuffer(n int, keep bool) []int64 {
	if keep {
		return make([]int64, n)
	}
	if cap(fw.totals) < n {
		fw.totals = make([]int64, n)
	}
	t := fw.totals[:n]
	clear(t)
	return t
}

// scoreBuffer returns a score list of length n for the k-th Score plugin,
// reusing the previous cycle's unless the caller keeps it.
func (fw *Framework) scoreBuffer(k, n int, keep bool) framework.NodeScoreList {
	if keep {
		return make(framework.NodeScoreList, n)
	}
	if fw.scratch == nil {
		fw.scratch = make([]framework.NodeScoreList, len(fw.score))
	}
	if cap(fw.scratch[k]) < n {
		fw.scratch[k] = make(framework.NodeScoreList, n)
	}
	return fw.scratch[k][:n]
}
