// Package sim runs controllers over the cluster state in virtual time. The
// controllers never call each other: each reads the state and writes the
// state, and the loop runs them in a fixed order until nothing changes, then
// moves the clock to the next timer.
package sim

import (
	"fmt"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
)

// Controller is one reconcile loop (scheduler, deployment controller, kubelet...).
//
// The contract every controller keeps: a pass reads only the state and its
// clock, and work that becomes due as the clock moves is announced with a
// timer (s.AddTimer). So once a pass of every controller changed nothing,
// passes change nothing until the next timer: the saved state records it
// (cluster.Settled) and an idle `advance` only moves the clock. A
// controller whose passes follow the clock without timers (the kubelet's
// lease renewals and status heartbeats, derived from the clock on a fixed
// grid) must say when it next will in internal/app's quietUntil
// (docs/state.md#idle-advance).
type Controller interface {
	Name() string
	// Sync does the work that is due at s.Now and reports whether it changed
	// anything. Work due later is announced with s.AddTimer.
	Sync(s *cluster.State) (changed bool, err error)
}

// maxRoundsPerInstant guards against two controllers undoing each other forever.
const maxRoundsPerInstant = 10000

// DefaultSettleHorizon bounds how far `apply` may run the clock forward.
const DefaultSettleHorizon = 30 * time.Minute

// RunNow runs the controllers at the current instant until none changes
// anything. Over a state still as its loaded record says it settled (a
// round at this resource version and clock changed nothing:
// cluster.Resumed) it has nothing to do: `advance` over a settled state
// starts at its first timer (docs/state.md#idle-advance).
func RunNow(s *cluster.State, ctrls []Controller) error {
	if s.Resumed() {
		return nil
	}
	for round := 0; round < maxRoundsPerInstant; round++ {
		changed := false
		for _, c := range ctrls {
			ch, err := c.Sync(s)
			if err != nil {
				return fmt.Errorf("%s: %w", c.Name(), err)
			}
			changed = changed || ch
		}
		if !changed {
			s.MarkSettled()
			return nil
		}
	}
	return fmt.Errorf("controllers did not settle at %s", s.Now.Format(time.RFC3339))
}

// Settle runs the cluster forward until no settling timer is left (pods have
// started, rollouts have progressed), at most horizon of virtual time.
func Settle(s *cluster.State, ctrls []Controller, horizon time.Duration) error {
	deadline := s.Now.Add(horizon)
	for {
		if err := RunNow(s, ctrls); err != nil {
			return err
		}
		next, ok := s.NextTimer(true)
		if !ok || next.After(deadline) {
			return nil
		}
		if err := step(s, ctrls, next); err != nil {
			return err
		}
	}
}

// Advance moves the clock forward by d, firing every timer on the way, then settles.
func Advance(s *cluster.State, ctrls []Controller, d time.Duration) error {
	end := s.Now.Add(d)
	for {
		if err := RunNow(s, ctrls); err != nil {
			return err
		}
		next, ok := s.NextTimer(false)
		if !ok || next.After(end) {
			break
		}
		if err := step(s, ctrls, next); err != nil {
			return err
		}
	}
	if end.After(s.Now) {
		s.Now = end
	}
	return RunNow(s, ctrls)
}

// step moves the clock to t (never backwards) and drops the timers due by then;
// the controllers rediscover their due work by looking at the state.
func step(s *cluster.State, ctrls []Controller, t time.Time) error {
	if t.After(s.Now) {
		s.Now = t
	}
	s.DropTimersUpTo(s.Now)
	// Every controller ran at the last instant: the schedulers have read
	// the cluster events announced so far.
	s.TrimEvents()
	return nil
}
