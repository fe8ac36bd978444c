package cluster

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestResumeGCRestoresSettings: after a whole load the collector waits
// for the heap to grow, and its first cycle puts the percentage and the
// memory limit back as they were.
func TestResumeGCRestoresSettings(t *testing.T) {
	// An earlier test's load may still be pending; its finalizer would put
	// back the percentage that load found, not ours.
	waitForResume(t)
	defer debug.SetGCPercent(debug.SetGCPercent(250))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	s := syntheticState(50, 100, 100)
	dir := t.TempDir()
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err != nil {
		t.Fatal(err)
	}
	waitForResume(t)
	if p := debug.SetGCPercent(250); p != 250 {
		t.Errorf("GC percent %d after the load, want 250", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit %d after the load, want none", l)
	}
}

// waitForResume collects until a pending load's first collection has run
// its finalizer (on its own goroutine, after the cycle).
func waitForResume(t *testing.T) {
	t.Helper()
	for i := 0; i < 100 && pendingGC(); i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if pendingGC() {
		t.Fatal("no collection ended the pause")
	}
}

func pendingGC() bool {
	gcAfterLoad.Lock()
	defer gcAfterLoad.Unlock()
	return gcAfterLoad.pending
}
