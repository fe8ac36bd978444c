package controllerutil

import "github.com/berth-sim/berth/internal/cluster"

// AddTimerOnce adds t unless an identical timer is already queued, so that a
// controller re-announcing the same wake-up on every sync does not pile them up.
func AddTimerOnce(s *cluster.State, t cluster.Timer) {
	for _, old := range s.Timers {
		if old.At.Equal(t.At) && old.Owner == t.Owner && old.Object == t.Object && old.Settling == t.Settling {
			return
		}
	}
	s.AddTimer(t)
}
