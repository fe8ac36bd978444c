// Package progress draws berth's single self-overwriting status line on a
// terminal's stderr while a long command runs the cluster forward
// (docs/progress.md). It never decides anything about the simulation: the
// run loop hands it a Snapshot of virtual-time facts, and the wall clock is
// read only to throttle how often the line is redrawn. Nothing it prints
// reaches a pipe, a file or a test: New returns nil unless stderr is a
// terminal.
package progress

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Interval is the shortest wall-clock time between two redraws (at most
// five a second), and also how long a command runs before the first line
// appears, so quick commands never flash one.
const Interval = 200 * time.Millisecond

// Snapshot is what the run loop knows cheaply at one moment of virtual time.
type Snapshot struct {
	// Elapsed is the virtual time this command has run so far.
	Elapsed time.Duration
	// Total is the virtual time the command will run (advance 24h: 24h);
	// zero when the run is open-ended (settling after apply or delete).
	Total time.Duration
	// Pending counts pods not yet bound to a node.
	Pending int
	// Nodes counts the cluster's nodes; Launching the Karpenter NodeClaims
	// not yet initialized.
	Nodes, Launching int
}

// Line is the status line of one command. Its zero value is not usable;
// a nil *Line draws nothing.
type Line struct {
	w io.Writer
	// now is the wall clock, used for throttling only: never in the text.
	now   func() time.Time
	width int
	last  time.Time
	drawn bool
}

// Terminal reports whether a file descriptor is a terminal and its width
// in columns (0 when unknown).
type Terminal func(fd uintptr) (isTerminal bool, width int)

// FD is what New needs of stderr: *os.File has it.
type FD interface {
	io.Writer
	Fd() uintptr
}

// New returns a Line drawing on w when w is a terminal, else nil. The
// terminal check and the clock are injected so tests run without a tty.
func New(w io.Writer, isTerminal Terminal, now func() time.Time) *Line {
	f, ok := w.(FD)
	if !ok {
		return nil
	}
	tty, width := isTerminal(f.Fd())
	if !tty {
		return nil
	}
	return &Line{w: w, now: now, width: width}
}

// Due reports whether Show would draw now; the run loop builds a Snapshot
// only then, so a run pays for one clock read per round and nothing more.
// The first call starts the delay before the first line.
func (l *Line) Due() bool {
	if l == nil {
		return false
	}
	t := l.now()
	if l.last.IsZero() {
		l.last = t
		return false
	}
	return t.Sub(l.last) >= Interval
}

// Show redraws the line with s.
func (l *Line) Show(s Snapshot) {
	if l == nil {
		return
	}
	l.last = l.now()
	text := Format(s)
	if r := []rune(text); l.width > 1 && len(r) > l.width-1 {
		// One column short of the width keeps the cursor off the margin,
		// where some terminals wrap and break the overwrite.
		text = string(r[:l.width-1])
	}
	fmt.Fprintf(l.w, "\r\x1b[K%s", text)
	l.drawn = true
}

// Clear erases the line if one is shown, before the command prints its
// own output or ends; the throttle restarts so the next run waits again.
func (l *Line) Clear() {
	if l == nil {
		return
	}
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
	l.last = time.Time{}
}

// Format renders a Snapshot, e.g.
// "berth: virtual time 3h12m / 24h · 4,210 pods pending · 120 nodes (12 launching)".
// It is plain ASCII apart from the separators.
func Format(s Snapshot) string {
	var b strings.Builder
	b.WriteString("berth: virtual time ")
	b.WriteString(Duration(s.Elapsed))
	if s.Total > 0 {
		b.WriteString(" / ")
		b.WriteString(Duration(s.Total))
	} else {
		b.WriteString(" (settling)")
	}
	fmt.Fprintf(&b, " · %s pending · %s", plural(s.Pending, "pod"), plural(s.Nodes, "node"))
	if s.Launching > 0 {
		fmt.Fprintf(&b, " (%s launching)", Count(s.Launching))
	}
	return b.String()
}

// Duration renders d to the second without zero tails: 3h12m, 45s, 24h, 0s.
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	if d <= 0 {
		return "0s"
	}
	h, m, sec := int64(d/time.Hour), int64(d%time.Hour/time.Minute), int64(d%time.Minute/time.Second)
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if sec > 0 {
		fmt.Fprintf(&b, "%ds", sec)
	}
	return b.String()
}

// Count renders n with thousands separators: 4,210.
func Count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// plural is "1 pod", "4,210 pods".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return Count(n) + " " + noun + "s"
}
