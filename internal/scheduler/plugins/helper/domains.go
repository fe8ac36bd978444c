package helper

import (
	"maps"

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
	// key is the topology key; zeros caches Values as a map of zero counts.
	key   string
	zeros map[string]int
	// requires lists further keys a node must carry to be counted.
	requires []string
}

// ZeroCounts returns a fresh map from every domain to 0. Cloning a cached
// table is much cheaper than inserting every domain anew.
func (kd *KeyDomains) ZeroCounts() map[string]int {
	if kd.zeros == nil {
		kd.zeros = make(map[string]int, len(kd.Values))
		for v := range kd.Values {
			kd.zeros[v] = 0
		}
	}
	return maps.Clone(kd.zeros)
}

// hasAll reports whether labels carry every key kd requires besides its own.
func (kd *KeyDomains) hasAll(labels map[string]string) bool {
	for _, k := range kd.requires {
		if _, ok := labels[k]; !ok {
			return false
		}
	}
	return true
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
	// classNodes[class] maps a node to its pods of the class; built on
	// first use of NodesByClass, then kept up to date.
	classNodes      []map[*framework.NodeInfo]int64
	classNodesBuilt bool
	// columns caches label values per key over the nodes (Column);
	// positions and domainNodes number the nodes (nodeset.go).
	columns     map[string]*LabelColumn
	positions   map[*framework.NodeInfo]int32
	domainNodes map[string]map[string][]int32
	valueIDs    map[string]valueColumn
	holders     map[string]NodeSet
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
	x.classNodes, x.classNodesBuilt = nil, false
	x.columns, x.positions, x.domainNodes, x.valueIDs, x.holders = nil, nil, nil, nil, nil
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
	if ni.Node == nil || (len(x.keys) == 0 && !x.classNodesBuilt) {
		return
	}
	class := x.classes.intern(pi.Pod)
	if x.classNodesBuilt {
		x.countNode(class, ni)
	}
	for _, kd := range x.keys {
		if v, ok := ni.Node.Labels[kd.key]; ok && kd.hasAll(ni.Node.Labels) {
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
	return x.KeyWithin(key, nil)
}

// KeyWithin is Key restricted to the nodes that also carry every key in
// requires (which may include key itself); requires must be sorted.
func (x *ClassDomainIndex) KeyWithin(key string, requires []string) *KeyDomains {
	id := key
	var others []string
	for _, k := range requires {
		if k != key {
			others = append(others, k)
			id += "\x00" + k
		}
	}
	if kd := x.keys[id]; kd != nil {
		return kd
	}
	kd := &KeyDomains{Values: map[string]struct{}{}, key: key, requires: others}
	for _, ni := range x.nodes {
		if ni.Node == nil {
			continue
		}
		v, ok := ni.Node.Labels[key]
		if !ok || !kd.hasAll(ni.Node.Labels) {
			continue
		}
		kd.Values[v] = struct{}{}
		for _, p := range ni.Pods {
			kd.count(x.classes.intern(p.Pod), v)
		}
	}
	x.keys[id] = kd
	return kd
}

// NodesByClass returns, per class id, the nodes (with a Node) holding pods
// of the class and how many. Entries are never zero; callers must not
// modify the maps.
func (x *ClassDomainIndex) NodesByClass() []map[*framework.NodeInfo]int64 {
	if !x.classNodesBuilt {
		x.classNodesBuilt = true
		for _, ni := range x.nodes {
			if ni.Node == nil {
				continue
			}
			for _, p := range ni.Pods {
				x.countNode(x.classes.intern(p.Pod), ni)
			}
		}
	}
	return x.classNodes
}

func (x *ClassDomainIndex) countNode(class int32, ni *framework.NodeInfo) {
	for int(class) >= len(x.classNodes) {
		x.classNodes = append(x.classNodes, nil)
	}
	m := x.classNodes[class]
	if m == nil {
		m = map[*framework.NodeInfo]int64{}
		x.classNodes[class] = m
	}
	m[ni]++
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
