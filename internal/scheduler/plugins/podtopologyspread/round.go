package podtopologyspread

import "math"

// roundScore is int64(math.Round(x)) for a raw score. Scores are sums of
// non-negative terms, and for 0 <= x < 2^52 the conversion truncates, the
// fraction x - trunc(x) is exact, and a fraction of one half or more
// rounds up: Round's half-away-from-zero without its bit manipulation,
// which costs more than the rest of a node's score in PreScore's loop.
// Anything else (negative, huge, NaN) goes through math.Round.
func roundScore(x float64) int64 {
	if x >= 0 && x < 1<<52 {
		return roundSmall(x)
	}
	return int64(math.Round(x))
}

// roundSmall is roundScore for 0 <= x < 2^52, small enough to be inlined
// where roundScore is not (PreScore's loop checks the range itself).
func roundSmall(x float64) int64 {
	t := int64(x)
	if x-float64(t) >= 0.5 {
		t++
	}
	return t
}
