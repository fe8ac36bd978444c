package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeTTY is a writer with a file descriptor, as *os.File is.
type fakeTTY struct{ bytes.Buffer }

func (*fakeTTY) Fd() uintptr { return 7 }

// fakeClock is a wall clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func tty(width int) Terminal             { return func(uintptr) (bool, int) { return true, width } }
func notTTY(uintptr) (bool, int)         { return false, 0 }
func snap(elapsed time.Duration, n int) Snapshot {
	return Snapshot{Elapsed: elapsed, Total: 24 * time.Hour, Pending: n, Nodes: 3}
}

// TestNewOnlyOnTerminal: no line at all unless the writer is a terminal.
func TestNewOnlyOnTerminal(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	if l := New(&bytes.Buffer{}, tty(80), c.now); l != nil {
		t.Fatalf("a writer without a descriptor got a line")
	}
	w := &fakeTTY{}
	l := New(w, notTTY, c.now)
	if l != nil {
		t.Fatalf("a non-terminal got a line")
	}
	// A nil line is inert.
	for i := 0; i < 3; i++ {
		c.add(time.Second)
		if l.Due() {
			t.Fatalf("nil line due")
		}
		l.Show(snap(time.Hour, 1))
		l.Clear()
	}
	if w.Len() != 0 {
		t.Fatalf("printed %q on a non-terminal", w.String())
	}
}

// TestThrottleAndErase walks one command: nothing before the first
// Interval, at most one redraw per Interval, and Clear erases only what was
// drawn.
func TestThrottleAndErase(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	w := &fakeTTY{}
	l := New(w, tty(0), c.now)
	steps := []struct {
		advance time.Duration
		due     bool
	}{
		{0, false},                      // first call starts the delay
		{150 * time.Millisecond, false}, // quick commands never show a line
		{50 * time.Millisecond, true},   // 200ms: draw
		{199 * time.Millisecond, false}, // throttled
		{time.Millisecond, true},        // 200ms after the last draw
	}
	for i, s := range steps {
		c.add(s.advance)
		if got := l.Due(); got != s.due {
			t.Fatalf("step %d: Due() = %v, want %v", i, got, s.due)
		}
		if s.due {
			l.Show(snap(time.Duration(i)*time.Hour, 4210))
		}
	}
	l.Clear()
	l.Clear() // nothing left to erase
	want := "\r\x1b[Kberth: virtual time 2h / 24h · 4,210 pods pending · 3 nodes" +
		"\r\x1b[Kberth: virtual time 4h / 24h · 4,210 pods pending · 3 nodes" +
		"\r\x1b[K"
	if got := w.String(); got != want {
		t.Fatalf("printed\n%q\nwant\n%q", got, want)
	}
	// After Clear the next run waits a full Interval again.
	if l.Due() {
		t.Fatalf("due straight after Clear")
	}
	l.Clear()
	if got := w.String(); got != want {
		t.Fatalf("Clear without a line printed %q", strings.TrimPrefix(got, want))
	}
}

// TestWidth: the line stays one column short of the terminal's width.
func TestWidth(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	w := &fakeTTY{}
	l := New(w, tty(30), c.now)
	l.Show(snap(0, 1))
	want := "\r\x1b[Kberth: virtual time 0s / 24h "
	if got := w.String(); got != want {
		t.Fatalf("printed %q, want %q", got, want)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		s    Snapshot
		want string
	}{
		{Snapshot{Elapsed: 3*time.Hour + 12*time.Minute, Total: 24 * time.Hour, Pending: 4210, Nodes: 120, Launching: 12},
			"berth: virtual time 3h12m / 24h · 4,210 pods pending · 120 nodes (12 launching)"},
		{Snapshot{Elapsed: 95 * time.Second, Pending: 1, Nodes: 1},
			"berth: virtual time 1m35s (settling) · 1 pod pending · 1 node"},
		{Snapshot{Elapsed: 1500 * time.Millisecond, Total: time.Hour, Pending: 1234567},
			"berth: virtual time 2s / 1h · 1,234,567 pods pending · 0 nodes"},
	} {
		if got := Format(tc.s); got != tc.want {
			t.Errorf("Format(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 12345: "12,345", 123456: "123,456", -1000: "-1,000"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
