package controllerutil

import (
	"time"

	"github.com/berth-sim/berth/internal/cluster"
)

// Quiet lets a controller skip a pass that cannot change anything. A
// controller's pass reads the state and the clock only, and every write to
// the state moves its resource version (State.Bump). So when the last pass
// changed nothing, and neither the resource version nor the clock has
// moved since, this pass would change nothing either: at 100,000 pods such
// a pass still visits every pod. sim.RunNow ends each instant with a round
// in which no controller changes anything, and controllers whose objects
// another controller is not touching sit out the rounds before it
// (docs/simulation-speed.md).
//
// Idempotent side effects of a pass (AddTimerOnce, renewing a lease to the
// current tick) are covered too: at the same clock they would write the
// same values again.
type Quiet struct {
	state *cluster.State
	rv    int64
	now   time.Time
	// anyTime: the last pass's outcome did not depend on the clock.
	anyTime bool
}

// Skip reports whether this pass can be skipped.
func (q *Quiet) Skip(s *cluster.State) bool {
	return q.state == s && q.rv == s.ResourceVersion && (q.anyTime || q.now.Equal(s.Now))
}

// Done records the pass's outcome: only a pass that changed nothing makes
// the next one at the same state skippable.
func (q *Quiet) Done(s *cluster.State, changed bool) {
	q.DoneAnyTime(s, changed, false)
}

// DoneAnyTime is Done for a pass that can tell whether its outcome depended
// on the clock (docs/simulation-speed.md#passes-the-clock-does-not-change-session-23).
// When anyTime is true, a pass that changed nothing makes the next ones
// skippable until the next write, however far the clock moves: the same
// pass at a later instant would read the same objects, come to the same
// conclusions and queue no timer. Every instant starts with a round at
// the resource version the previous instant ended with, so such a
// controller sits that round out.
func (q *Quiet) DoneAnyTime(s *cluster.State, changed, anyTime bool) {
	if changed {
		q.state = nil
		return
	}
	q.state, q.rv, q.now, q.anyTime = s, s.ResourceVersion, s.Now, anyTime
}
