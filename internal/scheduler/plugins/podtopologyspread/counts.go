package podtopologyspread

import "sync"

// domainCounts is one constraint's PreFilter count per domain. The
// counting passes (walk.go, countFromIndex) sum by the index's value ids;
// turning those sums into a string-keyed map cost one hash insert per
// domain and cycle (one per node for hostname keys) while Filter on
// snapshot nodes reads the ids (fastfilter.go) and never the map. So the
// map is made from the ids only when something asks a domain by name:
// Filter on a node outside the snapshot, AddPod/RemovePod's overlay, or
// the critical paths when no fast filter was built (docs/scheduler.md,
// "PodTopologySpread counts by value id"). The content is the same either
// way; clones share the value, so the map is made at most once per cycle.
type domainCounts struct {
	once sync.Once
	m    map[string]int
	// names[id] is the domain of value id and byID[id] its count; seen[id]
	// tells which ids are domains (nil: every id is one); n is how many
	// are. names is nil when the counts were made as a map.
	names []string
	byID  []int
	seen  []bool
	n     int
}

// mapCounts wraps a map made by the caller.
func mapCounts(m map[string]int) *domainCounts {
	d := &domainCounts{m: m}
	d.once.Do(func() {})
	return d
}

// idCountsOf holds counts by value id; seen nil means every id is a domain.
func idCountsOf(names []string, byID []int, seen []bool) *domainCounts {
	n := len(names)
	if seen != nil {
		n = 0
		for _, ok := range seen {
			if ok {
				n++
			}
		}
	}
	return &domainCounts{names: names, byID: byID, seen: seen, n: n}
}

// asMap is the counts by domain name, made on first use (safe for the
// concurrent Filter calls of a cycle); callers must not write it.
func (d *domainCounts) asMap() map[string]int {
	d.once.Do(func() {
		d.m = make(map[string]int, d.n)
		for id, v := range d.names {
			if d.seen == nil || d.seen[id] {
				d.m[v] += d.byID[id]
			}
		}
	})
	return d.m
}

// size is the number of domains, without making the map.
func (d *domainCounts) size() int {
	if d.names == nil {
		return len(d.m)
	}
	return d.n
}
