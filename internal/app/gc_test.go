package app

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestPauseGCIsCounted: overlapping print-only commands keep the collector
// off until the last one ends, then put the percentage back; without a
// memory limit nothing changes.
func TestPauseGCIsCounted(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	pauseGC()()
	if p := debug.SetGCPercent(150); p != 150 {
		t.Fatalf("without a memory limit the percentage became %d", p)
	}
	debug.SetMemoryLimit(1 << 40)
	first, second := pauseGC(), pauseGC()
	first()
	first() // a second call is a no-op
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("one command still running: percentage %d, want off", p)
	}
	second()
	if p := debug.SetGCPercent(150); p != 150 {
		t.Errorf("after the last command: percentage %d, want 150", p)
	}
}
