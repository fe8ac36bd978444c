package interpodaffinity

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// fastScore is the per-domain score numbered by the index's value ids, so
// that Score on a snapshot node reads a position and a slice per topology
// key instead of the node's label map and a string-keyed score map. PreScore
// adds the index's per-domain counts straight into it (no string-keyed map
// in between). Nodes outside the snapshot are answered through their labels
// and the same value ids; both sum the same integers.
type fastScore struct {
	pos  helper.NodePositions
	x    *helper.ClassDomainIndex
	keys []fastScoreKey
	// byKey finds a key's entry in keys; any is set once some domain got a
	// score (even a zero sum), which is when the map form is non-empty.
	byKey map[string]int
	any   bool
	// incomplete is set when a domain value had no id (never for domains
	// counted over the index's own nodes); PreScore then uses the map form.
	incomplete bool
}

type fastScoreKey struct {
	key     string
	ids     []int32
	byValue map[string]int32
	// byID is the domain's score by value id (absent domains score 0);
	// touched marks the domains the map form would list.
	byID    []int64
	touched []bool
}

func newFastScore(x *helper.ClassDomainIndex) *fastScore {
	return &fastScore{pos: x.NodePositions(), x: x, byKey: map[string]int{}}
}

// addDomains adds weight times each domain's count to key's scores, as
// scoreMap.addDomains does.
func (f *fastScore) addDomains(key string, domains map[string]int64, weight int64) {
	if len(domains) == 0 {
		return
	}
	f.any = true
	k := f.key(key)
	for v, n := range domains {
		id, ok := k.byValue[v]
		if !ok {
			f.incomplete = true
			continue
		}
		k.byID[id] += weight * n
		k.touched[id] = true
	}
}

// key returns key's entry, made on first use.
func (f *fastScore) key(key string) *fastScoreKey {
	i, ok := f.byKey[key]
	if !ok {
		ids, byValue := f.x.ValueIDs(key)
		i = len(f.keys)
		f.byKey[key] = i
		f.keys = append(f.keys, fastScoreKey{key: key, ids: ids, byValue: byValue,
			byID: make([]int64, len(byValue)), touched: make([]bool, len(byValue))})
	}
	return &f.keys[i]
}

// addTerm is addDomains over an existing term's counts, read by value id
// when the term kept them (same ids: the term lives as long as f.x's
// numbering), through the map otherwise.
func (f *fastScore) addTerm(st *scoreTerm, hard bool, weight int64) {
	domains, d := st.soft, &st.softID
	if hard {
		domains, d = st.hard, &st.hardID
	}
	if len(domains) == 0 {
		return
	}
	if st.noID {
		f.addDomains(st.term.TopologyKey, domains, weight)
		return
	}
	f.any = true
	k := f.key(st.term.TopologyKey)
	for _, id := range d.ids {
		k.byID[id] += weight * d.n[id]
		k.touched[id] = true
	}
}

// score is Score's sum for a snapshot node; ok is false for other nodes.
func (f *fastScore) score(ni *framework.NodeInfo) (int64, bool) {
	p, ok := f.pos.Of(ni)
	if !ok {
		return 0, false
	}
	var sum int64
	for i := range f.keys {
		if id := f.keys[i].ids[p]; id >= 0 {
			sum += f.keys[i].byID[id]
		}
	}
	return sum, true
}

// scoreByLabels is Score's sum for any node, read through its labels.
func (f *fastScore) scoreByLabels(ni *framework.NodeInfo) int64 {
	var sum int64
	for i := range f.keys {
		k := &f.keys[i]
		if v, ok := ni.Node.Labels[k.key]; ok {
			if id, ok := k.byValue[v]; ok {
				sum += k.byID[id]
			}
		}
	}
	return sum
}
