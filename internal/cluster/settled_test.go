package cluster

import (
	"testing"
	"time"
)

func TestIdleThrough(t *testing.T) {
	at := Epoch.Add(time.Minute)
	until := at.Add(30 * time.Second)
	beat := at.Add(10 * time.Second)
	settled := func(s *State) { s.Settled = &Settled{ResourceVersion: 7, At: at, Until: &until} }
	beats := func(s *State) { settled(s); s.Settled.Heartbeat = &beat }
	for _, tc := range []struct {
		name  string
		setup func(s *State)
		d     time.Duration
		want  Idleness
	}{
		{"no record", func(s *State) {}, time.Second, NotIdle},
		{"settled, nothing due", settled, time.Second, ClockOnly},
		{"zero duration", settled, 0, ClockOnly},
		{"up to a second before until", settled, 29 * time.Second, ClockOnly},
		{"onto until", settled, 30 * time.Second, NotIdle},
		{"no until: any length", func(s *State) { settled(s); s.Settled.Until = nil }, 24 * time.Hour, ClockOnly},
		{"written since", func(s *State) { settled(s); s.ResourceVersion = 8 }, time.Second, NotIdle},
		{"clock moved since", func(s *State) { settled(s); s.Now = at.Add(time.Second) }, time.Second, NotIdle},
		{"timer before the end", func(s *State) { settled(s); s.Timers = []Timer{{At: at.Add(5 * time.Second)}} }, 10 * time.Second, NotIdle},
		{"timer at the end", func(s *State) { settled(s); s.Timers = []Timer{{At: at.Add(10 * time.Second)}} }, 10 * time.Second, NotIdle},
		{"timer after the end", func(s *State) { settled(s); s.Timers = []Timer{{At: at.Add(11 * time.Second)}} }, 10 * time.Second, ClockOnly},
		{"timer already due", func(s *State) { settled(s); s.Timers = []Timer{{At: at}} }, 0, NotIdle},
		{"short of the heartbeat", beats, 9 * time.Second, ClockOnly},
		{"onto the heartbeat", beats, 10 * time.Second, HeartbeatsOnly},
		{"past the heartbeat, short of until", beats, 29 * time.Second, HeartbeatsOnly},
		{"past the heartbeat, onto until", beats, 30 * time.Second, NotIdle},
		{"past the heartbeat, onto a timer", func(s *State) { beats(s); s.Timers = []Timer{{At: at.Add(20 * time.Second)}} }, 20 * time.Second, NotIdle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &State{Now: at, ResourceVersion: 7}
			tc.setup(s)
			if got := s.IdleThrough(s.Now.Add(tc.d)); got != tc.want {
				t.Errorf("IdleThrough(+%s) = %d, want %d", tc.d, got, tc.want)
			}
		})
	}
}

func TestSealSettled(t *testing.T) {
	none := func(*State) (time.Time, bool) { return time.Time{}, false }
	s := New("", 1)
	s.SealSettled(none, none)
	if s.Settled != nil {
		t.Fatalf("never settled: %+v", s.Settled)
	}
	s.MarkSettled()
	tick := s.Now.Add(10 * time.Second)
	s.SealSettled(func(*State) (time.Time, bool) { return tick, true }, none)
	if r := s.Settled; r == nil || r.ResourceVersion != s.ResourceVersion || !r.At.Equal(s.Now) || r.Until == nil || !r.Until.Equal(tick) || r.Heartbeat != nil {
		t.Fatalf("settled pass: %+v", r)
	}
	s.Bump() // a write after the pass
	s.SealSettled(none, none)
	if s.Settled != nil {
		t.Fatalf("written after the pass: %+v", s.Settled)
	}
	s.MarkSettled()
	s.Now = s.Now.Add(time.Second) // the clock moved after the pass
	s.SealSettled(none, none)
	if s.Settled != nil {
		t.Fatalf("clock moved after the pass: %+v", s.Settled)
	}
	// A record that matches the state resumes as the mark; one that does
	// not is dropped.
	s.MarkSettled()
	s.SealSettled(none, none)
	s.ResumeSettled()
	if s.Settled != nil || !s.Resumed() {
		t.Fatalf("resumed: record %+v, resumed %v", s.Settled, s.Resumed())
	}
	s.MarkSettled() // a pass of this process is not a resumed record
	if s.Resumed() {
		t.Fatal("a pass of this process counts as resumed")
	}
	s.MarkSettled()
	s.SealSettled(none, none)
	s.Bump()
	s.ResumeSettled()
	if s.Settled != nil || s.Resumed() {
		t.Fatalf("stale record resumed: record %+v, resumed %v", s.Settled, s.Resumed())
	}
	// A record whose until is its own instant (a controller following the
	// clock right away) is not resumed.
	s.MarkSettled()
	s.SealSettled(func(s *State) (time.Time, bool) { return s.Now, true }, none)
	s.ResumeSettled()
	if s.Resumed() {
		t.Fatal("a record with until = at resumed")
	}
}

// TestHeadRoundTrip saves a state, moves its head's clock and checks that
// a whole load sees the new clock and settled record and nothing else
// changed.
func TestHeadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := New("", 1)
	s.Timers = []Timer{{At: s.Now.Add(time.Hour), Owner: "x"}}
	s.MarkSettled()
	s.SealSettled(func(*State) (time.Time, bool) { return time.Time{}, false }, func(*State) (time.Time, bool) { return time.Time{}, false })
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	h, err := LoadHead(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Partial() || len(h.Timers) != 1 || h.Settled == nil {
		t.Fatalf("head: partial %v timers %v settled %+v", h.Partial(), h.Timers, h.Settled)
	}
	end := h.Now.Add(time.Minute)
	if h.IdleThrough(end) != ClockOnly {
		t.Fatal("head not idle through a minute")
	}
	h.Now, h.Settled.At = end, end
	if err := h.SaveHead(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Now.Equal(end) || got.Settled == nil || !got.Settled.At.Equal(end) || got.ResourceVersion != s.ResourceVersion || len(got.Timers) != 1 {
		t.Fatalf("after SaveHead: now %s settled %+v rv %d timers %v", got.Now, got.Settled, got.ResourceVersion, got.Timers)
	}
	if err := got.SaveHead(dir); err == nil {
		t.Fatal("SaveHead of a whole state succeeded")
	}
}
