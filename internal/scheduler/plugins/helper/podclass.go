package helper

import (
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// PodClass is what label selection can see of a pod. Pods of one template
// share a class, so a selector is evaluated once per class per cycle rather
// than once per pod.
type PodClass struct {
	Namespace   string
	Labels      labels.Set
	Terminating bool
}

// ClassCount is how many pods of one class a node holds.
type ClassCount struct {
	Class int32
	Count int32
}

type nodeClasses struct {
	gen    int64
	counts []ClassCount
}

// PodClassIndex caches, per NodeInfo object, the classes of the pods on it.
// An entry is rebuilt when the NodeInfo's Generation changes, so it is always
// exact; a snapshot that keeps its NodeInfo objects between cycles gets the
// most out of it. It is not safe for concurrent use; callers serialise.
type PodClassIndex struct {
	ids     map[string]int32
	classes []PodClass
	nodes   map[*framework.NodeInfo]*nodeClasses
	key     strings.Builder
	keys    []string
}

// maxClasses bounds the intern table; beyond it the index starts afresh
// (classes of deleted pods are never reclaimed otherwise).
const maxClasses = 1 << 20

// NewPodClassIndex returns an empty index.
func NewPodClassIndex() *PodClassIndex {
	return &PodClassIndex{ids: map[string]int32{}, nodes: map[*framework.NodeInfo]*nodeClasses{}}
}

// BeginCycle starts a scheduling cycle over numNodes nodes: class ids stay
// stable until the next call. It drops everything when the intern table or
// the node cache (forked NodeInfos come and go) has grown too big.
func (x *PodClassIndex) BeginCycle(numNodes int) {
	if len(x.classes) > maxClasses || len(x.nodes) > 2*numNodes+1024 {
		x.ids, x.classes, x.nodes = map[string]int32{}, nil, map[*framework.NodeInfo]*nodeClasses{}
	}
}

// NumClasses is the number of classes interned so far; class ids are below it.
func (x *PodClassIndex) NumClasses() int { return len(x.classes) }

// Class returns a class by id.
func (x *PodClassIndex) Class(id int32) *PodClass { return &x.classes[id] }

// Counts returns the classes of the pods on ni with their counts.
func (x *PodClassIndex) Counts(ni *framework.NodeInfo) []ClassCount {
	if e := x.nodes[ni]; e != nil && e.gen == ni.Generation {
		return e.counts
	}
	e := &nodeClasses{gen: ni.Generation}
	for _, p := range ni.Pods {
		id := x.intern(p.Pod)
		found := false
		for i := range e.counts {
			if e.counts[i].Class == id {
				e.counts[i].Count++
				found = true
				break
			}
		}
		if !found {
			e.counts = append(e.counts, ClassCount{Class: id, Count: 1})
		}
	}
	x.nodes[ni] = e
	return e.counts
}

// Intern returns pod's class id, adding the class if it is new; ids stay
// valid as long as the index does.
func (x *PodClassIndex) Intern(pod *v1.Pod) int32 { return x.intern(pod) }

func (x *PodClassIndex) intern(pod *v1.Pod) int32 {
	x.keys = x.keys[:0]
	for k := range pod.Labels {
		x.keys = append(x.keys, k)
	}
	sort.Strings(x.keys)
	x.key.Reset()
	x.key.WriteString(pod.Namespace)
	if pod.DeletionTimestamp != nil {
		x.key.WriteString("\x00T")
	} else {
		x.key.WriteString("\x00L")
	}
	for _, k := range x.keys {
		x.key.WriteByte(0)
		x.key.WriteString(k)
		x.key.WriteByte('=')
		x.key.WriteString(pod.Labels[k])
	}
	s := x.key.String()
	if id, ok := x.ids[s]; ok {
		return id
	}
	id := int32(len(x.classes))
	x.classes = append(x.classes, PodClass{
		Namespace:   pod.Namespace,
		Labels:      labels.Merge(pod.Labels, nil),
		Terminating: pod.DeletionTimestamp != nil,
	})
	x.ids[s] = id
	return id
}

// ClassMemo caches one yes/no question per class for one cycle.
type ClassMemo struct {
	state []int8 // 0 unknown, 1 yes, 2 no
	ask   func(*PodClass) bool
	index *PodClassIndex
}

// NewClassMemo returns a memo of ask over x's classes.
func NewClassMemo(x *PodClassIndex, ask func(*PodClass) bool) *ClassMemo {
	return &ClassMemo{index: x, ask: ask}
}

// Has answers for class id, asking at most once.
func (m *ClassMemo) Has(id int32) bool {
	if int(id) >= len(m.state) {
		n := make([]int8, m.index.NumClasses())
		copy(n, m.state)
		m.state = n
	}
	switch m.state[id] {
	case 1:
		return true
	case 2:
		return false
	}
	if m.ask(m.index.Class(id)) {
		m.state[id] = 1
		return true
	}
	m.state[id] = 2
	return false
}
