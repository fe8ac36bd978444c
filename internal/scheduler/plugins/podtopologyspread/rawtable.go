package podtopologyspread

import "slices"

// rawTable memoizes, within one PreScore, a feasible node's raw score by
// what the sum reads for it: per constraint, whether the node carries the
// key and then its hostname count or its domain's value id. Nodes with the
// same reading get the same float operations in the same order, so the
// same rounded score; a cycle over hundreds of nodes has a few dozen
// readings (docs/scheduler.md#session-24-score). The float sum and its
// rounding are a chain of dependent instructions that cost more than
// looking the reading up.
type rawTable struct {
	// mult[i] is constraint i's multiplier in the key; hostSpan bounds the
	// hostname counts the table holds (others are computed directly).
	mult     []int
	hostSpan int
	vals     []int64
}

// maxRawTable bounds the table's cells.
const maxRawTable = 4096

// reset sizes the table for this PreScore: spans[i] is the number of
// readings of constraint i (0 for a hostname one, which gets hostSpan).
// It returns false when the product is too large.
func (t *rawTable) reset(spans []int, hostSpan int) bool {
	t.mult = slices.Grow(t.mult[:0], len(spans))[:len(spans)]
	t.hostSpan = hostSpan
	size := 1
	for i, s := range spans {
		if s == 0 {
			s = hostSpan + 1
		}
		t.mult[i] = size
		size *= s
		if size > maxRawTable {
			return false
		}
	}
	t.vals = slices.Grow(t.vals[:0], size)[:size]
	for i := range t.vals {
		t.vals[i] = -1
	}
	return true
}

// rawTableHostSpan is the largest hostname reading the table holds: a
// count of up to 62 matching pods on the node (the reading is count+1,
// 0 meaning the node lacks the key).
const rawTableHostSpan = 63
