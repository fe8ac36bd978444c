package interpodaffinity

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
	"github.com/berth-sim/berth/internal/scheduler/plugins/helper"
)

// Scoring reads every existing pod on every node twice over: the incoming
// pod's preferred terms against each pod's labels, and each pod's own
// scoring terms against the incoming pod. Both only depend on what a pod
// shares with its replicas (its class, or its terms), so the index counts
// pods per class and per distinct term in each topology domain, and a cycle
// matches each class and each distinct term once (docs/scheduler.md#sharing-work-between-pods).

// scoreTerm is one distinct term (by what it matches) among existing pods'
// scoring terms with, per domain of its topology key, how many pods there
// carry it as a required affinity term (hard) and the signed sum of the
// weights of the pods carrying it as a preferred term (soft). A domain is
// present once some pod there carries the term, even if weights cancel out.
type scoreTerm struct {
	term framework.AffinityTerm
	hard map[string]int64
	soft map[string]int64
	// hardID and softID are the same counts by the index's value ids of
	// the term's key, for PreScore's fast form (no string hashing per
	// domain); noID is set once some domain had no id (then only the maps
	// are read).
	hardID, softID domainsByID
	noID           bool
}

// domainsByID is a per-domain count by value id: n by id, and the ids of
// the domains present (those the map lists), in the order they appeared.
type domainsByID struct {
	n   []int64
	ids []int32
}

// scoreTerms interns existing pods' scoring terms by termKey; memo keeps
// their answers per incoming pod class.
type scoreTerms struct {
	ids   map[string]int32
	terms []scoreTerm
	memo  matchTable
	// x numbers the domains (its value ids live as long as these terms:
	// its reset makes new terms); nil: no ids are kept.
	x *helper.ClassDomainIndex
}

// matchTable keeps whether a term selects an incoming pod, per pod class:
// the answer depends only on the pod's namespace and labels (and on its
// namespace's labels, fixed within a snapshot). [class][term] is 0 unknown,
// 1 yes, 2 no. A table lives as long as its index, whose reset also
// renumbers the classes.
type matchTable [][]int8

// cell returns the entry of (class, term id), growing the table to numTerms.
func (m *matchTable) cell(class int32, id, numTerms int) *int8 {
	for int(class) >= len(*m) {
		*m = append(*m, nil)
	}
	row := (*m)[class]
	if len(row) < numTerms {
		row = append(row, make([]int8, numTerms-len(row))...)
		(*m)[class] = row
	}
	return &row[id]
}

// matches is term id's Matches(pod, nsLabels) for pod of class.
func (x *scoreTerms) matches(id int, class int32, pod *v1.Pod, nsLabels labels.Set) bool {
	c := x.memo.cell(class, id, len(x.terms))
	if *c == 0 {
		*c = 2
		if x.terms[id].term.Matches(pod, nsLabels) {
			*c = 1
		}
	}
	return *c == 1
}

func newScoreTerms(x *helper.ClassDomainIndex) *scoreTerms {
	return &scoreTerms{ids: map[string]int32{}, x: x}
}

func (x *scoreTerms) add(t *framework.AffinityTerm, hard bool, weight int64, value string) {
	key := termKey(t)
	id, ok := x.ids[key]
	if !ok {
		id = int32(len(x.terms))
		x.terms = append(x.terms, scoreTerm{term: *t})
		x.ids[key] = id
	}
	st := &x.terms[id]
	if hard {
		if st.hard == nil {
			st.hard = map[string]int64{}
		}
		n := len(st.hard)
		st.hard[value]++
		x.addByID(st, &st.hardID, value, 1, len(st.hard) > n)
		return
	}
	if st.soft == nil {
		st.soft = map[string]int64{}
	}
	n := len(st.soft)
	st.soft[value] += weight
	x.addByID(st, &st.softID, value, weight, len(st.soft) > n)
}

// addByID mirrors one map update into d: weight added to value's domain,
// which is new to the map when added is set.
func (x *scoreTerms) addByID(st *scoreTerm, d *domainsByID, value string, weight int64, added bool) {
	if st.noID {
		return
	}
	if x.x == nil {
		st.noID = true
		return
	}
	_, byValue := x.x.ValueIDs(st.term.TopologyKey)
	id, ok := byValue[value]
	if !ok {
		st.noID = true
		return
	}
	if d.n == nil {
		d.n = make([]int64, len(byValue))
	}
	d.n[id] += weight
	if added {
		d.ids = append(d.ids, id)
	}
}

// addPod counts pi's scoring terms in the domains of the node it is on.
func (x *scoreTerms) addPod(ni *framework.NodeInfo, pi *framework.PodInfo) {
	for i := range pi.RequiredAffinityTerms {
		t := &pi.RequiredAffinityTerms[i]
		if v, ok := ni.Node.Labels[t.TopologyKey]; ok {
			x.add(t, true, 1, v)
		}
	}
	for i := range pi.PreferredAffinityTerms {
		t := &pi.PreferredAffinityTerms[i]
		if v, ok := ni.Node.Labels[t.TopologyKey]; ok {
			x.add(&t.AffinityTerm, false, int64(t.Weight), v)
		}
	}
	for i := range pi.PreferredAntiAffinityTerms {
		t := &pi.PreferredAntiAffinityTerms[i]
		if v, ok := ni.Node.Labels[t.TopologyKey]; ok {
			x.add(&t.AffinityTerm, false, -int64(t.Weight), v)
		}
	}
}

// addDomains adds weight times each domain's count to the key's scores.
func (m scoreMap) addDomains(key string, domains map[string]int64, weight int64) {
	if len(domains) == 0 {
		return
	}
	inner := m[key]
	if inner == nil {
		inner = make(map[string]int64, len(domains))
		m[key] = inner
	}
	for v, n := range domains {
		inner[v] += weight * n
	}
}

// scoreFromIndex is PreScore's sum over the index: the incoming pod's
// preferred terms (namespaces resolved) against the classes of all pods when
// it has any, and the existing pods' terms against the incoming pod.
func (pl *Plugin) scoreFromIndex(x *existingIndex, pi *framework.PodInfo, affinity, antiAffinity []framework.WeightedAffinityTerm, score scoreAdder) {
	classes := x.domains.Classes()
	incoming := func(terms []framework.WeightedAffinityTerm, multiplier int64) {
		for i := range terms {
			t := &terms[i]
			kd := x.domains.Key(t.TopologyKey)
			for c := range kd.ByClass {
				if len(kd.ByClass[c]) > 0 && termMatchesClass(&t.AffinityTerm, classes.Class(int32(c)), nil) {
					score.addDomains(t.TopologyKey, kd.ByClass[c], int64(t.Weight)*multiplier)
				}
			}
		}
	}
	incoming(affinity, 1)
	incoming(antiAffinity, -1)
	nsLabels := pl.namespaceLabels(pi.Pod.Namespace)
	hard := int64(pl.args.HardPodAffinityWeight)
	var class int32 = -1
	for i := range x.scoring.terms {
		st := &x.scoring.terms[i]
		if (hard <= 0 || len(st.hard) == 0) && len(st.soft) == 0 {
			continue
		}
		if class < 0 {
			class = classes.Intern(pi.Pod)
		}
		if !x.scoring.matches(i, class, pi.Pod, nsLabels) {
			continue
		}
		if hard > 0 {
			score.addTerm(st, true, hard)
		}
		score.addTerm(st, false, 1)
	}
}

// scoreAdder receives PreScore's per-domain contributions: a scoreMap, or
// a fastScore that numbers the domains as they come.
type scoreAdder interface {
	addDomains(key string, domains map[string]int64, weight int64)
	// addTerm adds an existing term's hard or soft counts.
	addTerm(st *scoreTerm, hard bool, weight int64)
}

// addTerm is addDomains over the term's map.
func (m scoreMap) addTerm(st *scoreTerm, hard bool, weight int64) {
	if hard {
		m.addDomains(st.term.TopologyKey, st.hard, weight)
		return
	}
	m.addDomains(st.term.TopologyKey, st.soft, weight)
}
