package podtopologyspread

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
	natable "github.com/berth-sim/berth/internal/scheduler/plugins/nodeaffinity"
)

// A selection is what Score's hostname count and PreScore's plain domain
// totals depend on: the pods of one namespace that one selector picks (not
// terminating). Pods with equal selectors share it, owned or bare,
// whoever owns them (docs/scheduler.md, "PodTopologySpread selections").
//
// selections keeps, per snapshot, one selection's pod count on every node
// (by the node's position in the snapshot list) and, per topology key
// asked for, its pod count per domain over the nodes that carry the key.
// Both are filled once from the class index, then advanced pod by pod as
// the snapshot's log reports bindings (ClassDomainIndex.OnAdd), so a cycle
// reads them instead of counting. Within a snapshot pods are only added;
// any other change (a new Sync, a preemption, a node added by a
// simulation, node labels) comes with a new snapshot, which resets it
// (ClassDomainIndex.OnReset).
type selections struct {
	x     *helper.ClassDomainIndex
	byKey map[string]*selection
	list  []*selection
	// byClass[c] lists the selections of list[:seen[c]] that pick class c.
	byClass [][]*selection
	seen    []int32
	// cells is the number of per-node counters held; past maxSelectionCells
	// everything is dropped and rebuilt on demand.
	cells int
	// included holds inclusion policy verdicts by node position, per
	// inclusion shape (inclusion.go); affinity is the label table its
	// shapes compile their node affinity over (nil: not built yet).
	included map[string]*inclusion
	affinity *natable.Table
	// key is scratch space for selectionKey and inclusionKey, at for
	// PreScore's node positions, scores for its raw scores (fastscore.go).
	key    strings.Builder
	at     []int32
	scores scoreBuffer
	// labels holds PreScore's indexed label readers by constraint keys
	// (score_nodes.go).
	labels map[string]*indexedLabels
}

// maxSelectionCells bounds the per-node counters (4 bytes each) one
// snapshot may hold: 64 MiB, 3,355 selections on 5,000 nodes.
const maxSelectionCells = 1 << 24

type selection struct {
	ns  string
	sel labels.Selector
	// perNode[p] counts the selected pods on the node at position p.
	perNode []int32
	// nodes lists the positions with a nonzero count, in no particular order.
	nodes []int32
	// keys holds the per-domain totals of the topology keys asked for.
	keys []*domainTotals
}

// domainTotals counts a selection's pods per value of one key (by value id,
// helper.ClassDomainIndex.ValueIDs) over the nodes that carry the key.
type domainTotals struct {
	key    string
	ids    []int32
	counts []int64
}

func newSelections(x *helper.ClassDomainIndex) *selections {
	s := &selections{x: x}
	s.reset()
	return s
}

func (s *selections) reset() {
	s.byKey = map[string]*selection{}
	s.list, s.byClass, s.seen, s.cells, s.included, s.affinity = nil, nil, nil, 0, nil, nil
	s.labels = nil
}

// picks reports whether the selection counts pods of class pc.
func (sel *selection) picks(pc *helper.PodClass) bool {
	return !pc.Terminating && pc.Namespace == sel.ns && sel.sel.Matches(pc.Labels)
}

// add counts a pod bound to ni (the index's OnAdd hook).
func (s *selections) add(ni *framework.NodeInfo, pi *framework.PodInfo) {
	if len(s.list) == 0 || ni.Node == nil {
		return
	}
	p, ok := s.x.Positions()[ni]
	if !ok {
		return
	}
	for _, sel := range s.picking(s.x.Classes().Intern(pi.Pod)) {
		sel.count(p, 1)
	}
}

func (sel *selection) count(p int32, n int32) {
	if sel.perNode[p] == 0 {
		sel.nodes = append(sel.nodes, p)
	}
	sel.perNode[p] += n
	for _, t := range sel.keys {
		if id := t.ids[p]; id >= 0 {
			t.counts[id] += int64(n)
		}
	}
}

// picking returns the selections that pick class c, matching the selections
// made since the class was last asked about.
func (s *selections) picking(c int32) []*selection {
	for int(c) >= len(s.seen) {
		s.seen = append(s.seen, 0)
		s.byClass = append(s.byClass, nil)
	}
	if int(s.seen[c]) < len(s.list) {
		pc := s.x.Classes().Class(c)
		for _, sel := range s.list[s.seen[c]:] {
			if sel.picks(pc) {
				s.byClass[c] = append(s.byClass[c], sel)
			}
		}
		s.seen[c] = int32(len(s.list))
	}
	return s.byClass[c]
}

// get returns the selection of the pods in ns that sel picks, building it
// from the class index on first use in the snapshot. It returns nil for a
// selector that picks nothing (empty, or not selectable), whose counts are
// all 0 as countPodsMatchSelector's.
func (s *selections) get(ns string, sel labels.Selector) *selection {
	if sel.Empty() {
		return nil
	}
	key, ok := s.selectionKey(ns, sel)
	if !ok {
		return nil
	}
	if found := s.byKey[key]; found != nil {
		return found
	}
	n := s.x.NumNodes()
	if s.cells+n > maxSelectionCells {
		s.reset()
	}
	out := &selection{ns: ns, sel: sel, perNode: make([]int32, n)}
	pos := s.x.Positions()
	classes := s.x.Classes()
	for c, nodes := range s.x.NodesByClass() {
		if len(nodes) == 0 || !out.picks(classes.Class(int32(c))) {
			continue
		}
		for ni, k := range nodes {
			if p, ok := pos[ni]; ok {
				out.count(p, int32(k))
			}
		}
	}
	// Classes learn about the new selection when their next pod binds
	// (picking), so its counts stay in step from here on.
	s.byKey[key] = out
	s.list = append(s.list, out)
	s.cells += n
	return out
}

// totals returns the selection's per-domain counts of key, by value id.
func (sel *selection) totals(x *helper.ClassDomainIndex, key string) *domainTotals {
	for _, t := range sel.keys {
		if t.key == key {
			return t
		}
	}
	ids, _ := x.ValueIDs(key)
	t := &domainTotals{key: key, ids: ids, counts: make([]int64, len(x.ValueNames(key)))}
	for _, p := range sel.nodes {
		if id := ids[p]; id >= 0 {
			t.counts[id] += int64(sel.perNode[p])
		}
	}
	sel.keys = append(sel.keys, t)
	return t
}

// selectionKey spells out namespace and selector requirements so that equal
// selections get equal keys; ok is false for a selector that is not
// selectable (labels.Nothing).
func (s *selections) selectionKey(ns string, sel labels.Selector) (string, bool) {
	reqs, ok := sel.Requirements()
	if !ok {
		return "", false
	}
	b := &s.key
	b.Reset()
	b.WriteString(ns)
	for i := range reqs {
		r := &reqs[i]
		b.WriteByte(0)
		b.WriteString(r.Key())
		b.WriteByte(1)
		b.WriteString(string(r.Operator()))
		vals := r.ValuesUnsorted()
		if len(vals) > 1 && !slices.IsSorted(vals) {
			vals = slices.Clone(vals)
			slices.Sort(vals)
		}
		for _, v := range vals {
			b.WriteByte(1)
			b.WriteString(v)
		}
	}
	return b.String(), true
}

// selectionsLocked returns the plugin's selections, hooking them to the
// class index on first use (nothing is counted yet then, so no binding is
// missed). pl.mu must be held.
func (pl *Plugin) selectionsLocked() *selections {
	if pl.selections == nil {
		pl.selections = newSelections(pl.index)
		pl.index.OnReset = pl.selections.reset
		pl.index.OnAdd = pl.selections.add
	}
	return pl.selections
}
