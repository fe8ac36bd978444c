package scheduler

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// filterMemo keeps the verdicts of the node-local Filter plugins
// (framework.NodeLocalFilterPlugin) after the static ones, per pod shape
// and snapshot position, as scoreMemo does for scores
// (docs/scheduler.md#session-24-score). A kept verdict is used only for
// the NodeInfo at its position in the snapshot (not for preemption's or
// the nominated pods' copies, whose Generation says nothing about the
// original's), with the Generation it was reached at, in the cycle state
// findFeasible began it for.
type filterMemo struct {
	shapeTable[*shapeVerdicts]
	// The cycle being served: its state (nil: none), shape and snapshot.
	state *framework.CycleState
	cur   *shapeVerdicts
	snap  *Snapshot
	// slot maps a Filter plugin's index to its place in the shape's
	// records (-1: not kept).
	slot      []int
	key, part []byte
	// verify, when set (tests), is shown every verdict taken from the memo.
	verify func(pl framework.FilterPlugin, state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo, kept *framework.Status)
}

// shapeVerdicts is one shape's memo: per snapshot position, the epoch
// stamp and Generation (gen, two values a position), then width statuses.
type shapeVerdicts struct {
	shapeStamp
	gen []int64
	st  []*framework.Status
}

// begin sets the memo up for the cycle of state (Filter plugins from
// fw.staticFilters on, those not skipped); a no-op when none is
// node-local this cycle or the shape is new in this snapshot. end must
// follow.
func (m *filterMemo) begin(fw *Framework, state *framework.CycleState, pod *framework.PodInfo, skip []bool, sn *Snapshot) {
	m.state, m.cur = nil, nil
	if fw.plainFilters || sn == nil {
		return
	}
	if cap(m.slot) < len(fw.filter) {
		m.slot = make([]int, len(fw.filter))
	}
	m.slot = m.slot[:len(fw.filter)]
	m.key = m.key[:0]
	width := 0
	for i, pl := range fw.filter {
		m.slot[i] = -1
		if i < fw.staticFilters || skip[i] {
			continue
		}
		nl, ok := pl.(framework.NodeLocalFilterPlugin)
		if !ok {
			continue
		}
		part, ok := nl.AppendFilterShape(state, pod, m.part[:0])
		m.part = part
		if !ok {
			continue
		}
		m.key = appendShapeKey(m.key, i, part)
		m.slot[i] = width
		width++
	}
	if width == 0 {
		return
	}
	sh, worth, _ := m.use(m.key, sn, width, func() *shapeVerdicts { return &shapeVerdicts{} })
	if !worth {
		return
	}
	if len(sh.gen) < 2*sh.n {
		sh.gen = make([]int64, 2*sh.n)
	}
	if len(sh.st) < sh.n*sh.width {
		sh.st = make([]*framework.Status, sh.n*sh.width)
	}
	m.state, m.cur, m.snap = state, sh, sn
}

// end closes the cycle begin opened.
func (m *filterMemo) end() { m.state, m.cur, m.snap = nil, nil, nil }

// active tells whether ni at pos is answered from the memo in state's cycle.
func (m *filterMemo) active(state *framework.CycleState, ni *framework.NodeInfo, pos int) bool {
	return m.cur != nil && m.state == state && pos >= 0 && pos < len(m.snap.nodes) && m.snap.nodes[pos] == ni
}

// runFilterRange is Framework.runFilterRange for a node the memo answers
// (active): kept plugins' verdicts come from the memo while the node's
// Generation is the one they were reached at; the others run.
func (m *filterMemo) runFilterRange(fw *Framework, state *framework.CycleState, pod *framework.PodInfo, ni *framework.NodeInfo, skip []bool, from, to, pos int) *framework.Status {
	sh := m.cur
	valid := sh.gen[2*pos] == sh.epoch && sh.gen[2*pos+1] == ni.Generation
	if !valid {
		// A record is only ever filled whole; restamp it now, the slots
		// are written as their plugins run below.
		sh.gen[2*pos], sh.gen[2*pos+1] = 0, 0
	}
	filled := !valid
	for i := from; i < to; i++ {
		if skip[i] {
			continue
		}
		pl := fw.filter[i]
		var s *framework.Status
		if j := m.slot[i]; j >= 0 {
			at := pos*sh.width + j
			if valid {
				s = sh.st[at]
				if m.verify != nil {
					m.verify(pl, state, pod, ni, s)
				}
			} else {
				s = pl.Filter(state, pod, ni)
				sh.st[at] = s
			}
		} else {
			s = pl.Filter(state, pod, ni)
		}
		if s.IsSuccess() {
			continue
		}
		if !s.IsRejected() {
			// The record stays unstamped.
			return fw.filterError(pl, s)
		}
		if filled && m.noneKept(i+1, to, skip) {
			sh.gen[2*pos], sh.gen[2*pos+1] = sh.epoch, ni.Generation
		}
		return s.WithPlugin(pl.Name())
	}
	if filled {
		sh.gen[2*pos], sh.gen[2*pos+1] = sh.epoch, ni.Generation
	}
	return nil
}

// noneKept reports that no kept plugin runs in [from, to), so a record
// filled by the plugins before from is complete.
func (m *filterMemo) noneKept(from, to int, skip []bool) bool {
	for i := from; i < to; i++ {
		if !skip[i] && m.slot[i] >= 0 {
			return false
		}
	}
	return true
}
