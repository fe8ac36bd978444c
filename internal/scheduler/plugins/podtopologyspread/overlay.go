package podtopologyspread

import "maps"

// countOverlay is one constraint's changes to the shared per-domain counts
// of a preFilterState, written by AddPod and RemovePod (preemption's dry
// run, nominated pods). PreFilter's counts are never written after
// PreFilter returns, so a Clone shares them and copies only the overlay:
// the dry run clones the state once per node it examines, and a copy of
// every domain's count (one per node for hostname keys) made that cost
// O(nodes) per node (docs/scheduler.md, "Copy-on-write cycle state").
type countOverlay struct {
	// counts holds the current count of each changed domain.
	counts map[string]int
	// added is how many domains of counts are not in the shared map:
	// upstream's += inserts a domain it has not seen, which the number of
	// eligible domains (minDomains) counts.
	added int
}

// count is constraint i's matching pods in domain v: the overlay's value
// when it changed the domain, else the shared count. Without overlay (the
// main cycle) it is the plain map read.
func (s *preFilterState) count(i int, v string) int {
	if s.overlay != nil {
		if n, ok := s.overlay[i].counts[v]; ok {
			return n
		}
	}
	return s.tpValueToMatchNum[i].asMap()[v]
}

// domains is the number of domains of tpValueToMatchNum[i] as a deep copy with the same edits
// would have it.
func (s *preFilterState) domains(i int) int {
	n := s.tpValueToMatchNum[i].size()
	if s.overlay != nil {
		n += s.overlay[i].added
	}
	return n
}

// add moves constraint i's count of domain v by delta in the overlay and
// returns the new count.
func (s *preFilterState) add(i int, v string, delta int) int {
	if s.overlay == nil {
		s.overlay = make([]countOverlay, len(s.constraints))
	}
	o := &s.overlay[i]
	old, ok := o.counts[v]
	if !ok {
		var inBase bool
		old, inBase = s.tpValueToMatchNum[i].asMap()[v]
		if !inBase {
			o.added++
		}
		if o.counts == nil {
			o.counts = map[string]int{}
		}
	}
	o.counts[v] = old + delta
	return old + delta
}

// cloneOverlay copies the overlay (its size is the number of edits).
func cloneOverlay(o []countOverlay) []countOverlay {
	if o == nil {
		return nil
	}
	c := make([]countOverlay, len(o))
	for i := range o {
		c[i] = countOverlay{counts: maps.Clone(o[i].counts), added: o[i].added}
	}
	return c
}
