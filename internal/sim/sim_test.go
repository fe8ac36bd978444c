package sim

import (
	"testing"
	"time"

	"github.com/berth-sim/berth/internal/cluster"
)

// ticker does its work whenever a timer of its own has come due, and asks
// for the next one until it has run `runs` times.
type ticker struct {
	every    time.Duration
	settling bool
	runs     int
	ran      []time.Duration
	due      time.Time
}

func (t *ticker) Name() string { return "ticker" }

func (t *ticker) Sync(s *cluster.State) (bool, error) {
	if t.due.IsZero() {
		t.due = s.Now.Add(t.every)
		s.AddTimer(cluster.Timer{At: t.due, Owner: "ticker", Settling: t.settling})
		return false, nil
	}
	if s.Now.Before(t.due) || len(t.ran) == t.runs {
		return false, nil
	}
	t.ran = append(t.ran, s.Now.Sub(cluster.Epoch))
	if len(t.ran) < t.runs {
		t.due = s.Now.Add(t.every)
		s.AddTimer(cluster.Timer{At: t.due, Owner: "ticker", Settling: t.settling})
	}
	return true, nil
}

func TestSettleFollowsSettlingTimersOnly(t *testing.T) {
	s := cluster.New("", 1)
	work := &ticker{every: 2 * time.Second, settling: true, runs: 3}
	periodic := &ticker{every: 5 * time.Minute, settling: false, runs: 100}
	if err := Settle(s, []Controller{work, periodic}, DefaultSettleHorizon); err != nil {
		t.Fatal(err)
	}
	if got := s.Now.Sub(cluster.Epoch); got != 6*time.Second {
		t.Errorf("settled at %v, want 6s", got)
	}
	if len(work.ran) != 3 || len(periodic.ran) != 0 {
		t.Errorf("settling ticker ran %v, periodic ran %v", work.ran, periodic.ran)
	}
}

func TestAdvanceFiresEveryTimerAndStopsAtTheEnd(t *testing.T) {
	s := cluster.New("", 1)
	periodic := &ticker{every: 5 * time.Minute, runs: 100}
	if err := Advance(s, []Controller{periodic}, 16*time.Minute); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{5 * time.Minute, 10 * time.Minute, 15 * time.Minute}
	if len(periodic.ran) != len(want) {
		t.Fatalf("ran at %v, want %v", periodic.ran, want)
	}
	for i := range want {
		if periodic.ran[i] != want[i] {
			t.Errorf("run %d at %v, want %v", i, periodic.ran[i], want[i])
		}
	}
	if got := s.Now.Sub(cluster.Epoch); got != 16*time.Minute {
		t.Errorf("clock at %v, want 16m", got)
	}
}

// flipper changes something on every call: the loop must give up, not spin.
type flipper struct{}

func (flipper) Name() string                      { return "flipper" }
func (flipper) Sync(*cluster.State) (bool, error) { return true, nil }

func TestRunNowDetectsControllersThatNeverSettle(t *testing.T) {
	if err := RunNow(cluster.New("", 1), []Controller{flipper{}}); err == nil {
		t.Fatal("RunNow returned nil for a controller that always changes something")
	}
}
