package tainttoleration

import (
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// taintTable groups one snapshot's nodes by their taint list (key, value
// and effect, in order: all that Filter and Score read of a node), so that
// a verdict per list stands for every node carrying it
// (docs/scheduler.md#taints-by-taint-list). Class 0 is the empty list.
type taintTable struct {
	snap    *helper.SnapshotNodes
	classOf []int32
	// taints[c] is class c's list, as on its first node.
	taints [][]v1.Taint
}

func newTaintTable(list []*framework.NodeInfo) *taintTable {
	t := &taintTable{snap: helper.NewSnapshotNodes(list), classOf: make([]int32, len(list)), taints: [][]v1.Taint{nil}}
	ids := map[string]int32{}
	var b strings.Builder
	for i, ni := range list {
		if ni.Node == nil || len(ni.Node.Spec.Taints) == 0 {
			continue
		}
		b.Reset()
		for _, tn := range ni.Node.Spec.Taints {
			b.WriteString(tn.Key)
			b.WriteByte(0)
			b.WriteString(tn.Value)
			b.WriteByte(0)
			b.WriteString(string(tn.Effect))
			b.WriteByte(0)
		}
		id, ok := ids[b.String()]
		if !ok {
			id = int32(len(t.taints))
			ids[b.String()] = id
			t.taints = append(t.taints, ni.Node.Spec.Taints)
		}
		t.classOf[i] = id
	}
	return t
}

// class returns ni's taint class, or -1 when the table does not describe
// ni's node.
func (t *taintTable) class(ni *framework.NodeInfo) int32 {
	if t == nil {
		return -1
	}
	if p := t.snap.Position(ni); p >= 0 {
		return t.classOf[p]
	}
	return -1
}

// table returns the plugin's table for the handle's current snapshot list
// (nil without a handle). A new list also drops the Filter memo.
func (pl *TaintToleration) table() *taintTable {
	if pl.handle == nil {
		return nil
	}
	list := pl.handle.Nodes()
	if pl.tbl == nil || !pl.tbl.snap.Same(list) {
		pl.tbl = newTaintTable(list)
		pl.memo, pl.memos = nil, nil
	}
	return pl.tbl
}

// filterMemo keeps Filter's status per taint class for one list of
// tolerations. Within one snapshot a pod's tolerations do not change (only
// the scheduler runs while it is in use), so the pod object and its
// tolerations slice identify the pod last filtered; pods whose
// tolerations read the same (pods of one template, the many that carry
// only the default ones) share one memo through memos, as the verdict
// reads nothing else of the pod.
type filterMemo struct {
	pod  *v1.Pod
	tols []v1.Toleration
	done []bool
	st   []*framework.Status
}

// memoFor returns the memo for pod's tolerations.
func (pl *TaintToleration) memoFor(pod *v1.Pod) *filterMemo {
	if m := pl.memo; m != nil && m.pod == pod && sameSlice(m.tols, pod.Spec.Tolerations) {
		return m
	}
	key := tolerationsKey(&pl.key, pod.Spec.Tolerations)
	m := pl.memos[key]
	if m == nil {
		n := len(pl.tbl.taints)
		m = &filterMemo{done: make([]bool, n), st: make([]*framework.Status, n)}
		if pl.memos == nil {
			pl.memos = map[string]*filterMemo{}
		}
		pl.memos[key] = m
	}
	m.pod, m.tols = pod, pod.Spec.Tolerations
	pl.memo = m
	return m
}

// tolerationsKey spells out every field of the tolerations, in order,
// each length-prefixed so that no two lists share a spelling.
func tolerationsKey(b *strings.Builder, tols []v1.Toleration) string {
	b.Reset()
	put := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	for i := range tols {
		t := &tols[i]
		put(t.Key)
		put(string(t.Operator))
		put(t.Value)
		put(string(t.Effect))
		if t.TolerationSeconds != nil {
			put(strconv.FormatInt(*t.TolerationSeconds, 10))
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// sameSlice tells whether a and b are the same slice (array and length).
func sameSlice(a, b []v1.Toleration) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
