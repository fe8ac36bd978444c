package app

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/sim"
	"github.com/berth-sim/berth/internal/view"
)

// GetRequest is `berth get`.
type GetRequest struct {
	Args          []string
	Namespace     string
	AllNamespaces bool
	Selector      string
	FieldSelector string
	Output        string
	ShowLabels    bool
	NoHeaders     bool
	LabelColumns  []string
}

// Get prints objects as kubectl get does.
func (a *App) Get(r GetRequest) error {
	out, errOut, flush := buffered(a.opts.Out, a.opts.ErrOut)
	defer flush()
	return view.Get(out, a.state, view.GetOptions{
		Args: r.Args, Namespace: r.Namespace, AllNamespaces: r.AllNamespaces,
		LabelSelector: r.Selector, FieldSelector: r.FieldSelector, Output: r.Output,
		ShowLabels: r.ShowLabels, NoHeaders: r.NoHeaders, LabelColumns: r.LabelColumns, ErrOut: errOut,
	})
}

// buffered gathers a view's output into large writes (a table of 10,000
// pods is otherwise tens of thousands of small ones); whatever goes to
// errOut first flushes what is gathered, so the two streams interleave as
// they were written. flush writes the rest.
func buffered(out, errOut io.Writer) (bout, berr io.Writer, flush func()) {
	b := bufio.NewWriterSize(out, 64<<10)
	flush = func() { b.Flush() }
	if errOut == nil {
		return b, nil, flush
	}
	return b, flushFirst{b, errOut}, flush
}

// flushFirst is errOut behind a buffered out.
type flushFirst struct {
	out *bufio.Writer
	w   io.Writer
}

func (f flushFirst) Write(p []byte) (int, error) {
	f.out.Flush()
	return f.w.Write(p)
}

// DescribeRequest is `berth describe`.
type DescribeRequest struct {
	Args          []string
	Namespace     string
	Selector      string
	AllNamespaces bool
}

// Describe prints objects as kubectl describe does.
func (a *App) Describe(r DescribeRequest) error {
	kind, names := r.Args[0], r.Args[1:]
	if t, n, ok := splitTypeName(kind); ok {
		kind, names = t, append([]string{n}, names...)
	}
	out, _, flush := buffered(a.opts.Out, nil)
	defer flush()
	return view.Describe(out, a.state, kind, r.Namespace, names, r.Selector)
}

// Events prints events as kubectl events does.
func (a *App) Events(namespace string, all bool) error {
	return view.Events(a.opts.Out, a.state, namespace, all)
}

// RolloutRequest is `berth rollout status`.
type RolloutRequest struct {
	Args      []string
	Namespace string
	Watch     bool
	Timeout   time.Duration
}

// maxWatch bounds a --watch without --timeout: kubectl would wait forever.
const maxWatch = 24 * time.Hour

// ErrRolloutTimeout is kubectl's wait timeout.
var ErrRolloutTimeout = errors.New(view.RolloutTimeoutMessage)

// RolloutStatus prints the rollout status; with Watch it moves virtual time
// forward, one timer at a time, printing the status after each step as
// kubectl prints one line per watch event, until the rollout is done, the
// timeout passes, or nothing further can happen.
func (a *App) RolloutStatus(r RolloutRequest) (err error) {
	defer a.finish(&err)
	ref := r.Args[0]
	if len(r.Args) == 2 {
		ref = r.Args[0] + "/" + r.Args[1]
	}
	done, err := view.RolloutStatus(a.opts.Out, a.state, ref, r.Namespace, r.Watch, r.Timeout)
	if err != nil || done || !r.Watch {
		return err
	}
	work := a.change()
	ctrls := a.withProgress(a.controllers(work), r.Timeout)
	start := work.Now
	for !done {
		next, ok := work.NextTimer(false)
		if r.Timeout > 0 && (!ok || next.After(start.Add(r.Timeout))) {
			work.Now = start.Add(r.Timeout)
			a.state = work
			if err := a.save(); err != nil {
				return err
			}
			return ErrRolloutTimeout
		}
		if !ok || next.Sub(start) > maxWatch {
			return fmt.Errorf("the rollout can make no further progress in virtual time (at %s); add --timeout to bound the wait", work.Now.Sub(cluster.Epoch))
		}
		err := sim.Advance(work, ctrls, next.Sub(work.Now))
		a.clearProgress()
		if err != nil {
			return err
		}
		done, err = view.RolloutStatus(a.opts.Out, work, ref, r.Namespace, r.Watch, r.Timeout)
		if err != nil {
			return err
		}
	}
	a.state = work
	return a.save()
}
