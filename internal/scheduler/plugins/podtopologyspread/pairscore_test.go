package podtopologyspread

import (
	"fmt"
	"testing"
)

// TestPairScoresMatchLoop runs TestScoresMatchPlainComputation (raw and
// normalized scores against the plain computation, with the system
// defaults' hostname and zone pair and a hostname and rack pair among
// the cases) with pairScores' table bounded so that nodes with few pods
// read the table and the others take the direct path.
func TestPairScoresMatchLoop(t *testing.T) {
	defer func(w int) { pairTableHosts = w }(pairTableHosts)
	for _, width := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("width=%d", width), func(t *testing.T) {
			pairTableHosts = width
			TestScoresMatchPlainComputation(t)
		})
	}
}
