package scheduler

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// scoreMemo keeps the raw scores of the node-local Score plugins
// (framework.NodeLocalScorePlugin) per pod shape and snapshot position, so
// that the next pod of a template does not recompute them on nodes that
// did not change (docs/scheduler.md#session-24-score).
//
// Invariants that make a kept score equal to a fresh one:
//   - an entry is stamped with its shape's epoch, and a shape gets a new
//     epoch whenever the snapshot's id or length differs from the one it
//     was filled for; within one snapshot id a position always holds the
//     same NodeInfo (a replaced NodeInfo comes with a new id), and the
//     data a plugin reads beyond the node (node count, image spread, the
//     taint table) is fixed for the snapshot;
//   - an entry also holds the NodeInfo's Generation when it was scored,
//     and every change to a NodeInfo bumps it;
//   - the shape key is every local plugin's index and its spelling of
//     what it reads from the pod this cycle, length-prefixed.
//
// Only nodes found at their snapshot position are answered from the memo;
// a cycle with any other node (preemption's copies) is scored plainly.
type scoreMemo struct {
	shapeTable[*shapeScores]
	// Scratch, reused cycle after cycle.
	key, part []byte
	local     []int
	// norm lists the local plugins with a normalizer; slot maps a Score
	// plugin's index to its place in norm, -1 for one that is not local,
	// -2 for one whose score is in the sum.
	norm   []int
	slot   []int
	pos    []int32
	miss   []*framework.NodeInfo
	missAt []int
	buf    framework.NodeScoreList
	// verify, when set (tests), is shown what the memo answered, to
	// compare with the plain computation: the raw scores of normalizing
	// plugin k, or (k = -1) the totals holding the sums of the others.
	verify func(k int, state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo, kept any)
}

// shapeScores is one shape's memo. e holds, per snapshot position, a
// record of width+3 values: the epoch stamp, the node's Generation, the
// weighted sum of the raw scores of the local plugins that do not
// normalize (their raw score is their final one), then the raw score of
// each local plugin that normalizes, in the order of norm.
type shapeScores struct {
	shapeStamp
	e []int64
}

// prepare finds this cycle's node-local plugins and, for a shape seen
// before in this snapshot, fills the memo for the nodes it does not hold
// yet. It returns nil when the cycle is to be scored plainly; otherwise
// slotOf(k) tells where plugin k's scores are, and pos holds the nodes'
// positions.
func (m *scoreMemo) prepare(fw *Framework, state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo, sn *Snapshot) *shapeScores {
	m.key, m.local, m.norm = m.key[:0], m.local[:0], m.norm[:0]
	for k, ws := range fw.score {
		if _, skip := state.SkipScorePlugins[ws.plugin.Name()]; skip {
			continue
		}
		nl, ok := ws.plugin.(framework.NodeLocalScorePlugin)
		if !ok {
			continue
		}
		part, ok := nl.AppendScoreShape(state, pod, m.part[:0])
		m.part = part
		if !ok {
			continue
		}
		m.key = appendShapeKey(m.key, k, part)
		m.local = append(m.local, k)
		if ws.plugin.ScoreExtensions() != nil {
			m.norm = append(m.norm, k)
		}
	}
	if len(m.local) == 0 {
		return nil
	}
	m.pos = m.pos[:0]
	for _, ni := range nodes {
		p := sn.position(ni)
		if p < 0 {
			return nil
		}
		m.pos = append(m.pos, int32(p))
	}
	sh := m.shape(sn)
	if sh == nil {
		return nil
	}
	if cap(m.slot) < len(fw.score) {
		m.slot = make([]int, len(fw.score))
	}
	m.slot = m.slot[:len(fw.score)]
	for k := range m.slot {
		m.slot[k] = -1
	}
	for _, k := range m.local {
		m.slot[k] = -2
	}
	for j, k := range m.norm {
		m.slot[k] = j
	}
	if !m.fill(fw, sh, state, pod, nodes) {
		return nil
	}
	return sh
}

// shape returns the memo of the cycle's shape (m.key), stamped for sn, or
// nil on the shape's first cycle in this snapshot (a shape met once is
// not worth an array).
func (m *scoreMemo) shape(sn *Snapshot) *shapeScores {
	sh, worth, widthChanged := m.use(m.key, sn, len(m.norm), func() *shapeScores { return &shapeScores{} })
	if widthChanged {
		// Records of another width do not line up with this one's: an old
		// score could sit where a stamp is read.
		clear(sh.e)
	}
	if !worth {
		return nil
	}
	if need := sh.n * (sh.width + 3); len(sh.e) < need {
		// Stamps of 0 match no epoch.
		sh.e = make([]int64, need)
	}
	return sh
}

// fill scores, with each local plugin, the nodes the memo does not hold
// for their current Generation, and records them. false means a plugin
// failed or gave a score out of range; the cycle is then scored plainly,
// which reports it.
func (m *scoreMemo) fill(fw *Framework, sh *shapeScores, state *framework.CycleState, pod *framework.PodInfo, nodes []*framework.NodeInfo) bool {
	stride := sh.width + 3
	m.miss, m.missAt = m.miss[:0], m.missAt[:0]
	for i, ni := range nodes {
		r := sh.e[int(m.pos[i])*stride:]
		if r[0] == sh.epoch && r[1] == ni.Generation {
			continue
		}
		r[0], r[2] = 0, 0
		m.miss = append(m.miss, ni)
		m.missAt = append(m.missAt, i)
	}
	if len(m.miss) == 0 {
		return true
	}
	if cap(m.buf) < len(m.miss) {
		m.buf = make(framework.NodeScoreList, len(m.miss))
	}
	buf := m.buf[:len(m.miss)]
	for _, k := range m.local {
		ws := fw.score[k]
		if s := ws.plugin.(framework.BatchScorePlugin).ScoreNodes(state, pod, m.miss, buf); !s.IsSuccess() {
			return false
		}
		j := m.slot[k]
		for x, i := range m.missAt {
			r := sh.e[int(m.pos[i])*stride:]
			v := buf[x].Score
			if j >= 0 {
				r[3+j] = v
				continue
			}
			if v < framework.MinNodeScore || v > framework.MaxNodeScore {
				return false
			}
			r[2] += v * ws.weight
		}
	}
	for x, i := range m.missAt {
		r := sh.e[int(m.pos[i])*stride:]
		r[0], r[1] = sh.epoch, m.miss[x].Generation
	}
	return true
}

// addSums adds to totals each node's weighted sum of the local plugins
// that do not normalize.
func (m *scoreMemo) addSums(sh *shapeScores, totals []int64) {
	stride := sh.width + 3
	for i := range totals {
		totals[i] += sh.e[int(m.pos[i])*stride+2]
	}
}

// slotOf is plugin k's place among the memo's normalizing plugins, -2 when
// its score is in the sum, -1 when the memo does not hold it.
func (m *scoreMemo) slotOf(k int) int { return m.slot[k] }

// scores writes the raw scores of the j-th normalizing local plugin of the
// cycle prepare saw, node by node.
func (m *scoreMemo) scores(sh *shapeScores, j int, scores framework.NodeScoreList) {
	stride := sh.width + 3
	for i := range scores {
		scores[i].Score = sh.e[int(m.pos[i])*stride+3+j]
	}
}
