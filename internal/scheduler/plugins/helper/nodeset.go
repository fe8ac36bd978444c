package helper

import "github.com/berth-sim/berth/internal/scheduler/framework"

// NodeSet is a set of node positions in an index's node list, one bit each.
// Filters that answer "is this node's domain marked" for thousands of nodes
// per cycle test a bit instead of hashing label strings twice per node.
type NodeSet []uint64

// NewNodeSet returns an empty set for n positions.
func NewNodeSet(n int) NodeSet { return make(NodeSet, (n+63)/64) }

// Add puts position i in the set.
func (s NodeSet) Add(i int32) { s[i>>6] |= 1 << (uint(i) & 63) }

// Has reports whether position i is in the set.
func (s NodeSet) Has(i int32) bool { return s[i>>6]&(1<<(uint(i)&63)) != 0 }

// IntersectWith keeps only the positions also in o.
func (s NodeSet) IntersectWith(o NodeSet) {
	for i := range s {
		s[i] &= o[i]
	}
}

// Positions maps the index's nodes (with a Node) to their positions in the
// node list it was last updated with. Built once per snapshot; callers must
// not modify it.
func (x *ClassDomainIndex) Positions() map[*framework.NodeInfo]int32 {
	if x.positions == nil {
		x.positions = make(map[*framework.NodeInfo]int32, len(x.nodes))
		for i, ni := range x.nodes {
			if ni.Node != nil {
				x.positions[ni] = int32(i)
			}
		}
	}
	return x.positions
}

// NumNodes is the length of the node list the index was last updated with.
func (x *ClassDomainIndex) NumNodes() int { return len(x.nodes) }

// NodePositions returns the node list the index was last updated with, as
// a NodePositions that reads a node's position from its Index hint.
func (x *ClassDomainIndex) NodePositions() NodePositions { return NodePositions{nodes: x.nodes} }

// NodePositions answers what Positions answers for a node list without a
// map lookup: a NodeInfo's Index names its position in the snapshot list
// that numbered it, which is checked against the list. A node the hint
// does not lead to (copies, nodes numbered by another list) is reported
// absent; callers then take their general path, as for nodes outside the
// list.
type NodePositions struct {
	nodes []*framework.NodeInfo
}

// Of returns ni's position, or false.
func (p NodePositions) Of(ni *framework.NodeInfo) (int32, bool) {
	i := ni.Index
	if i < 0 || int(i) >= len(p.nodes) || p.nodes[i] != ni || ni.Node == nil {
		return -1, false
	}
	return i, true
}

// DomainNodes returns, for key, the positions of the nodes in each domain
// (node labels are fixed within a snapshot, so it is built once per key).
func (x *ClassDomainIndex) DomainNodes(key string) map[string][]int32 {
	if m, ok := x.domainNodes[key]; ok {
		return m
	}
	m := map[string][]int32{}
	for i, ni := range x.nodes {
		if ni.Node == nil {
			continue
		}
		if v, ok := ni.Node.Labels[key]; ok {
			m[v] = append(m[v], int32(i))
		}
	}
	if x.domainNodes == nil {
		x.domainNodes = map[string]map[string][]int32{}
	}
	x.domainNodes[key] = m
	return m
}

// AddDomains adds to s the nodes of every domain of key with a positive count.
func (x *ClassDomainIndex) AddDomains(s NodeSet, key string, counts map[string]int64) {
	dn := x.DomainNodes(key)
	for v, n := range counts {
		if n <= 0 {
			continue
		}
		for _, i := range dn[v] {
			s.Add(i)
		}
	}
}

// AddKeyHolders adds to s the nodes that carry key.
func (x *ClassDomainIndex) AddKeyHolders(s NodeSet, key string) {
	h := x.KeyHolders(key)
	for i := range s {
		s[i] |= h[i]
	}
}

// KeyHolders is the set of nodes that carry key, built once per key and
// snapshot; callers must not modify it.
func (x *ClassDomainIndex) KeyHolders(key string) NodeSet {
	if h, ok := x.holders[key]; ok {
		return h
	}
	h := NewNodeSet(len(x.nodes))
	for _, ps := range x.DomainNodes(key) {
		for _, i := range ps {
			h.Add(i)
		}
	}
	if x.holders == nil {
		x.holders = map[string]NodeSet{}
	}
	x.holders[key] = h
	return h
}

// ValueIDs numbers key's values over the index's nodes: ids[position] is
// the node's value's number (-1 when it lacks the key) and values maps each
// value to its number. Built once per key and snapshot; callers must not
// modify them.
func (x *ClassDomainIndex) ValueIDs(key string) (ids []int32, values map[string]int32) {
	c := x.valueColumn(key)
	return c.ids, c.seen
}

// ValueNames lists key's values by the numbers ValueIDs gives them.
func (x *ClassDomainIndex) ValueNames(key string) []string { return x.valueColumn(key).names }

func (x *ClassDomainIndex) valueColumn(key string) valueColumn {
	if c, ok := x.valueIDs[key]; ok {
		return c
	}
	c := valueColumn{ids: make([]int32, len(x.nodes)), seen: map[string]int32{}}
	seen := c.seen
	for i, ni := range x.nodes {
		c.ids[i] = -1
		if ni.Node == nil {
			continue
		}
		v, ok := ni.Node.Labels[key]
		if !ok {
			continue
		}
		id, found := seen[v]
		if !found {
			id = int32(len(seen))
			seen[v] = id
			c.names = append(c.names, v)
		}
		c.ids[i] = id
	}
	if x.valueIDs == nil {
		x.valueIDs = map[string]valueColumn{}
	}
	x.valueIDs[key] = c
	return c
}

type valueColumn struct {
	ids   []int32
	seen  map[string]int32
	names []string
}
