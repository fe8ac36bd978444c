package app

import (
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/karpenter/lifecycle"
	"github.com/berth-sim/berth/internal/progress"
	"github.com/berth-sim/berth/internal/sim"
)

// Progress receives the status of a long run (docs/progress.md). It is nil
// unless the CLI found stderr to be a terminal; *progress.Line implements it.
// It only observes: whether and when it draws never changes the cluster.
type Progress interface {
	// Due reports whether Show would draw now (a wall-clock throttle).
	Due() bool
	Show(progress.Snapshot)
	// Clear erases what was drawn, before the command prints anything.
	Clear()
}

// progressObserver rides at the end of the controller list so that the
// run loop of internal/sim needs no hook of its own: it is asked to Sync once
// per round, reports no change (so it never keeps an instant running), and
// hands a snapshot to the Progress only when that is due.
type progressObserver struct {
	p     Progress
	start time.Time
	total time.Duration
}

func (o *progressObserver) Name() string { return "progress" }

func (o *progressObserver) Sync(s *cluster.State) (bool, error) {
	if o.p.Due() {
		o.p.Show(snapshot(s, o.start, o.total))
	}
	return false, nil
}

// withProgress appends the observer when a Progress is set; total is the
// virtual time the run will cover (0: open-ended).
// Elapsed counts from the command's start, so a drain's settling goes on
// from where its evictions left off.
func (a *App) withProgress(ctrls []sim.Controller, total time.Duration) []sim.Controller {
	if a.opts.Progress == nil {
		return ctrls
	}
	return append(ctrls, &progressObserver{p: a.opts.Progress, start: a.began, total: total})
}

// clearProgress erases the status line; every path that prints after running
// the cluster calls it first.
func (a *App) clearProgress() {
	if a.opts.Progress != nil {
		a.opts.Progress.Clear()
	}
}

// snapshot counts what the line shows: pods with no node, nodes, and
// NodeClaims not yet initialized (Karpenter's launching nodes).
func snapshot(s *cluster.State, start time.Time, total time.Duration) progress.Snapshot {
	snap := progress.Snapshot{Elapsed: s.Now.Sub(start), Total: total, Nodes: len(s.Nodes)}
	for _, p := range s.Pods {
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
			snap.Pending++
		}
	}
	for _, nc := range s.NodeClaims {
		if nc.DeletionTimestamp == nil && !lifecycle.IsTrue(nc, lifecycle.ConditionInitialized) {
			snap.Launching++
		}
	}
	return snap
}
