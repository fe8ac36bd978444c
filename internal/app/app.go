// Package app carries out berth's commands: it opens the persisted cluster,
// runs the requested change through admission and the controllers in virtual
// time, saves the result atomically and renders views. The CLI only parses flags.
package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/controllers/kubelet"
	"github.com/berth-sim/berth/internal/scheduler"
	"github.com/berth-sim/berth/internal/sim"
	"github.com/berth-sim/berth/internal/version"
)

// Version is berth's own version.
const Version = "0.1.0-dev"

// DefaultKubernetesVersion is the version of a state created without one.
func DefaultKubernetesVersion() string { return cluster.DefaultKubernetesVersion }

// SupportedVersions names the modelled range.
func SupportedVersions() string {
	return fmt.Sprintf("1.%d-1.%d", version.OldestMinor, version.NewestMinor)
}

// Options configure one command run.
type Options struct {
	StateDir          string
	KubernetesVersion string
	Seed              int64
	In                io.Reader
	Out, ErrOut       io.Writer
	// ReadOnly commands (get, describe, events) share the state's lock;
	// every other command holds it exclusively from load to save.
	ReadOnly bool
	// Scope, for a ReadOnly command, limits what is loaded of the state
	// (docs/state.md#speed); the zero value loads all of it.
	Scope ReadScope
	// PrintOnly marks a ReadOnly command that only prints what it loaded
	// (get, describe): the collector stays off while it runs (gc.go).
	// Commands that simulate on copies (why) or write much (export) leave
	// it unset.
	PrintOnly bool
	// LockTimeout is how long to wait for another command's lock (0: fail
	// at once when the state is in use).
	LockTimeout time.Duration
	// SchedulerObserver, when set, watches every scheduling attempt (the
	// conformance harness's end-to-end mode).
	SchedulerObserver scheduler.Observer
	// Progress, when set, shows a long run's status on a terminal
	// (docs/progress.md); nil everywhere else, so output never depends on it.
	Progress Progress
	// HeadFirst, for `advance`, makes Open read only the state's head
	// (clock, timers, settled record): Advance then moves the clock alone
	// when nothing is due, or loads the rest (idle.go). Only Advance may
	// be called on such an App.
	HeadFirst bool
}

// App is one command's view of the cluster.
type App struct {
	opts  Options
	state *cluster.State
	// head, with HeadFirst, is the state's head until Advance loads the
	// rest (state is nil until then).
	head *cluster.State
	// fresh is true when no state existed on disk.
	fresh bool
	lock  *cluster.Lock
	// began is the virtual time the command started at; the progress line
	// counts from it.
	began time.Time
	// changing is set while a command changes the state in place and has
	// not saved it yet (change, finish).
	changing bool
	// resumeGC ends a read-only command's pause of the collector (gc.go).
	resumeGC func()
}

// Open locks the state directory, then loads the state or prepares a new
// one (not written until a change is saved). The lock is taken before the
// load so that a command's read-modify-write never interleaves with
// another's; Close releases it.
func Open(opts Options) (*App, error) {
	if opts.KubernetesVersion != "" {
		if _, err := version.Parse(opts.KubernetesVersion); err != nil {
			return nil, err
		}
	}
	lock, err := cluster.LockState(opts.StateDir, !opts.ReadOnly, opts.LockTimeout, opts.ErrOut)
	if err != nil {
		return nil, err
	}
	if opts.HeadFirst && !opts.ReadOnly {
		// Any failure to read the head (no database yet, a legacy
		// state.json) leaves it to the whole load below.
		if h, err := cluster.LoadHead(opts.StateDir, false); err == nil {
			warnVersion(opts, h)
			return &App{opts: opts, head: h, lock: lock, began: h.Now, resumeGC: func() {}}, nil
		}
	}
	load, resumeGC := cluster.Load, func() {}
	if opts.ReadOnly {
		load = opts.Scope.loader()
		if opts.PrintOnly {
			resumeGC = pauseGC()
		}
	}
	s, err := load(opts.StateDir)
	switch {
	case errors.Is(err, cluster.ErrNoState):
		s = newState(opts.KubernetesVersion, opts.Seed)
		return &App{opts: opts, state: s, fresh: true, lock: lock, began: s.Now, resumeGC: resumeGC}, nil
	case err != nil:
		resumeGC()
		lock.Unlock()
		return nil, err
	}
	if s.NeedsUpgrade() && !opts.ReadOnly {
		// A state.json of an earlier berth becomes the database once, under
		// the exclusive lock (docs/state.md#upgrade); readers read it as is.
		if err := s.Save(opts.StateDir); err != nil {
			resumeGC()
			lock.Unlock()
			return nil, err
		}
	}
	warnVersion(opts, s)
	return &App{opts: opts, state: s, lock: lock, began: s.Now, resumeGC: resumeGC}, nil
}

// warnVersion says that --kubernetes-version does not apply to an existing
// cluster.
func warnVersion(opts Options, s *cluster.State) {
	if opts.KubernetesVersion != "" && opts.KubernetesVersion != s.Info.KubernetesVersion {
		fmt.Fprintf(opts.ErrOut, "berth: warning: --kubernetes-version %s ignored: the cluster in %s runs %s (berth reset to start over)\n",
			opts.KubernetesVersion, opts.StateDir, s.Info.KubernetesVersion)
	}
}

// Close releases the state's lock.
func (a *App) Close() error {
	a.clearProgress() // an error message may follow
	a.resumeGC()
	return a.lock.Unlock()
}

// State exposes the cluster for tests and benchmarks.
func (a *App) State() *cluster.State { return a.state }

// Reset removes the state directory's state database (and a legacy
// state.json), under the lock so that it never lands in the middle of
// another command. The lock file stays.
func Reset(opts Options) error {
	if _, err := os.Stat(opts.StateDir); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(opts.Out, "berth: cluster state in %s cleared\n", opts.StateDir)
		return nil
	}
	lock, err := cluster.LockState(opts.StateDir, true, opts.LockTimeout, opts.ErrOut)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if err := cluster.Remove(opts.StateDir); err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "berth: cluster state in %s cleared\n", opts.StateDir)
	return nil
}

// Advance moves virtual time forward. Over a state recorded settled with
// nothing due by the end, only the clock moves (idle.go).
func (a *App) Advance(d time.Duration) (err error) {
	if a.head != nil {
		idle, err := a.advanceIdle(d)
		if err != nil {
			return err
		}
		if idle {
			fmt.Fprintf(a.opts.Out, "berth: advanced %s; virtual time is now %s\n", d, a.head.Now.Sub(cluster.Epoch).Round(time.Second))
			return nil
		}
		if err := a.loadRest(); err != nil {
			return err
		}
	}
	defer a.finish(&err)
	work := a.change()
	err = sim.Advance(work, a.withProgress(a.controllers(work), d), d)
	a.clearProgress()
	if err != nil {
		return err
	}
	a.state = work
	if err := a.save(); err != nil {
		return err
	}
	fmt.Fprintf(a.opts.Out, "berth: advanced %s; virtual time is now %s\n", d, work.Now.Sub(cluster.Epoch).Round(time.Second))
	return nil
}

// change hands a command the state to change in place: no copy of the
// whole cluster up front (docs/state.md#failed-commands). The command
// defers finish with its error.
func (a *App) change() *cluster.State {
	if a.state.Partial() {
		// Only read-only commands load part of the state, and they change
		// nothing: controllers must never run on a state missing objects.
		panic("app: a command changes a state loaded in part for reading")
	}
	a.changing = true
	// Only a pass of the controllers that changes nothing may record the
	// state settled again (save); a matching record tells the simulator
	// that a pass before any write would change nothing (sim.RunNow).
	a.state.ResumeSettled()
	return a.state
}

// finish ends a command begun with change. A command that failed before it
// saved has written nothing to disk, but its half-made changes are in
// memory: the state is read back from the database (or made afresh when
// there is none) so that callers that keep the App, such as berth test's
// steps, go on from the saved state.
func (a *App) finish(err *error) {
	if !a.changing {
		return
	}
	a.changing = false
	if *err == nil {
		return
	}
	s, lerr := cluster.Load(a.opts.StateDir)
	switch {
	case errors.Is(lerr, cluster.ErrNoState):
		s = newState(a.opts.KubernetesVersion, a.opts.Seed)
	case lerr != nil:
		*err = errors.Join(*err, fmt.Errorf("restoring the saved state: %w", lerr))
		return
	}
	a.state = s
}

func (a *App) save() error {
	a.state.SealSettled(quietUntil, kubelet.NextHeartbeat)
	if err := a.state.Save(a.opts.StateDir); err != nil {
		return err
	}
	a.changing = false
	return nil
}

func (a *App) namespaceOr(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// splitTypeName splits "deployment/ui" into its parts.
func splitTypeName(arg string) (string, string, bool) {
	i := strings.Index(arg, "/")
	if i <= 0 || i == len(arg)-1 {
		return "", "", false
	}
	return arg[:i], arg[i+1:], true
}

// newState is a brand-new, empty cluster; Apply fills it.
func newState(kubernetesVersion string, seed int64) *cluster.State {
	return cluster.New(kubernetesVersion, seed)
}
