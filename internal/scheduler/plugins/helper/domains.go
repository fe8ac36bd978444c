package helper

import (
	"github.com/berth-sim/berth/internal/scheduler/framework"
)

// AddedPod is one pod accounted to a snapshot node after the snapshot was built.
type AddedPod struct {
	Node *framework.NodeInfo
	Pod  *framework.PodInfo
}

// PodLog is implemented by handles whose snapshot records the pods added to
// it, so that plugins can keep per-snapshot indexes up to date by replaying
// the additions instead of walking every node each cycle.
type PodLog interface {
	// AddedPods returns an id unique to the current snapshot and the pods
	// added to it since it was built, oldest first.
	AddedPods() (snapshot uint64, added []AddedPod)
}

// logCursor remembers how much of a PodLog has been consumed.
type logCursor struct {
	snapshot uint64
	consumed int
	valid    bool
}

// next returns the additions not consumed yet. rebuild is true when the
// snapshot is new (or the cursor was invalid); ok is false when the handle
// keeps no log or nodes is not the handle's snapshot list.
func (c *logCursor) next(h framework.Handle, nodes []*framework.NodeInfo) (added []AddedPod, rebuild, ok bool) {
	pl, isLog := h.(PodLog)
	all := h.Nodes()
	if !isLog || len(all) != len(nodes) || (len(nodes) > 0 && &all[0] != &nodes[0]) {
		c.valid = false
		return nil, true, false
	}
	id, log := pl.AddedPods()
	if !c.valid || id != c.snapshot || c.consumed > len(log) {
		c.snapshot, c.consumed, c.valid = id, len(log), true
		return nil, true, true
	}
	added = log[c.consumed:]
	c.consumed = len(log)
	return added, false, true
}

// KeyDomains holds, for one topology key, the domains of the indexed nodes
// and how many pods of each class each domain holds.
type KeyDomains struct {
	// Values is the set of the key's values over the nodes that carry it.
	Values map[string]struct{}
	// ByClass[class] maps a domain to its pod count; entries are never zero.
	ByClass []map[string]int64
}

// ClassDomainIndex counts, per topology key, the pods of each class in each
// domain over a node list. Kept per snapshot and advanced from the handle's
// PodLog, a cycle costs the pods bound since the previous cycle instead of a
// walk over every node. Keys are indexed on first use. Not safe for
// concurrent use.
type ClassDomainIndex struct {
	cursor  logCursor
	nodes   []*framework.NodeInfo
	classes *PodClassIndex
	keys    map[string]*KeyDomains
	// missing counts, per key asked for, the nodes that lack the key.
	missing map[string]int
	// OnReset and OnAdd let an owner keep more per-pod data in step.
	OnReset func()
	OnAdd   func(ni *framework.NodeInfo, pi *framework.PodInfo)
}

// NewClassDomainIndex returns an empty index.
func NewClassDomainIndex() *ClassDomainIndex {
	return &ClassDomainIndex{classes: NewPodClassIndex(), keys: map[string]*KeyDomains{}}
}

// Update brings the index to nodes' current pods: by replaying the handle's
// log when nodes is the same snapshot as last time, by rebuilding otherwise.
// It reports whether the index will be reusable next cycle (false: rebuilt
// from nodes because the handle keeps no log).
func (x *ClassDomainIndex) Update(h framework.Handle, nodes []*framework.NodeInfo) bool {
	added, rebuild, ok := x.cursor.next(h, nodes)
	if rebuild {
		x.reset(nodes)
		return ok
	}
	for _, a := range added {
		x.add(a.Node, a.Pod)
	}
	return true
}

func (x *ClassDomainIndex) reset(nodes []*framework.NodeInfo) {
	x.nodes = nodes
	x.classes = NewPodClassIndex()
	x.keys = map[string]*KeyDomains{}
	x.missing = nil
	if x.OnReset != nil {
		x.OnReset()
	}
	if x.OnAdd != nil {
		for _, ni := range nodes {
			for _, p := range ni.Pods {
				x.OnAdd(ni, p)
			}
		}
	}
}

func (x *ClassDomainIndex) add(ni *framework.NodeInfo, pi *framework.PodInfo) {
	if x.OnAdd != nil {
		x.OnAdd(ni, pi)
	}
	if ni.Node == nil || len(x.keys) == 0 {
		return
	}
	class := x.classes.intern(pi.Pod)
	for key, kd := range x.keys {
		if v, ok := ni.Node.Labels[key]; ok {
			kd.count(class, v)
		}
	}
}

func (kd *KeyDomains) count(class int32, value string) {
	for int(class) >= len(kd.ByClass) {
		kd.ByClass = append(kd.ByClass, nil)
	}
	m := kd.ByClass[class]
	if m == nil {
		m = map[string]int64{}
		kd.ByClass[class] = m
	}
	m[value]++
}

// Key returns the domains of key, indexing it now if needed.
func (x *ClassDomainIndex) Key(key string) *KeyDomains {
	if kd := x.keys[key]; kd != nil {
		return kd
	}
	kd := &KeyDomains{Values: map[string]struct{}{}}
	for _, ni := range x.nodes {
		if ni.Node == nil {
			continue
		}
		v, ok := ni.Node.Labels[key]
		if !ok {
			continue
		}
		kd.Values[v] = struct{}{}
		for _, p := range ni.Pods {
			kd.count(x.classes.intern(p.Pod), v)
		}
	}
	x.keys[key] = kd
	return kd
}

// Classes is the class table the index's class ids refer to.
func (x *ClassDomainIndex) Classes() *PodClassIndex { return x.classes }

// Missing is how many indexed nodes (with a Node) lack the label key. Node
// labels are fixed within a snapshot, so it is computed once per key.
func (x *ClassDomainIndex) Missing(key string) int {
	if n, ok := x.missing[key]; ok {
		return n
	}
	n := 0
	for _, ni := range x.nodes {
		if ni.Node == nil {
			continue
		}
		if _, ok := ni.Node.Labels[key]; !ok {
			n++
		}
	}
	if x.missing == nil {
		x.missing = map[string]int{}
	}
	x.missing[key] = n
	return n
}
