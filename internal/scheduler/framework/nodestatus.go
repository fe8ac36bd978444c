package framework

// StatusesByPosition is a failed cycle's explicit statuses kept by node
// position in the scheduler's snapshot list rather than in a map by name
// (docs/scheduler.md#failed-cycles-by-position): a cycle that examines
// thousands of nodes fills a slice, and PostFilter and the FailedScheduling
// message read it without hashing a name per node.
type StatusesByPosition struct {
	// Names are the snapshot's node names by position (shared, never
	// changed); Status[i] is the status of node Names[i], nil for a node
	// with no explicit status.
	Names  []string
	Status []*Status
	// Count is how many entries of Status are set.
	Count int
}

// Len is how many nodes have an explicit status.
func (m NodeToStatus) Len() int {
	if m.ByPosition != nil {
		return m.ByPosition.Count
	}
	return len(m.Statuses)
}

// Lookup returns a node's explicit status, if it has one.
func (m NodeToStatus) Lookup(node string) (*Status, bool) {
	if p := m.ByPosition; p != nil {
		for i, n := range p.Names {
			if n == node && p.Status[i] != nil {
				return p.Status[i], true
			}
		}
		return nil, false
	}
	st, ok := m.Statuses[node]
	return st, ok
}

// Map returns the explicit statuses by node name (Statuses itself when
// they are kept there).
func (m NodeToStatus) Map() map[string]*Status {
	p := m.ByPosition
	if p == nil {
		return m.Statuses
	}
	out := make(map[string]*Status, p.Count)
	for i, st := range p.Status {
		if st != nil {
			out[p.Names[i]] = st
		}
	}
	return out
}

// Each calls f with every explicit status, whichever way they are kept
// (nodes rejected alike may share one status, so f may see it more than
// once).
func (m NodeToStatus) Each(f func(node string, st *Status)) {
	if p := m.ByPosition; p != nil {
		for i, st := range p.Status {
			if st != nil {
				f(p.Names[i], st)
			}
		}
		return
	}
	for n, st := range m.Statuses {
		f(n, st)
	}
}
