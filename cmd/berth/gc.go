package main

import (
	"os"
	"runtime/debug"
)

// Garbage collector settings for one CLI command (docs/simulation-speed.md).
// A command builds the whole cluster state, runs it and exits, so most of
// what it allocates stays live to the end: with Go's default (GOGC=100) the
// collector runs every time the heap doubles and spends a sixth of a 10,000
// pod apply marking the same state again and again. berth lets the heap grow
// to five times the live data instead, and a soft memory limit makes the
// collector work harder only when the heap nears it, so a 100,000-pod state
// stays in bounds. Such a state is a gigabyte live and the Go heap holds a
// third more in partly used spans: under 1.5 GiB the collector ran back to
// back for the last third of the command. Every page the heap grows into
// costs a page fault (system time on the goroutine that touches it), so
// the limit is not set higher than needed: at 1.625 GiB a 100,000-pod
// apply runs 7 cycles (6 or 7 at 1.75 GiB), peaks 130 MB lower (1.74 GB)
// and takes 40,000-65,000 fewer faults
// (docs/simulation-speed.md#session-24-record-events-memory-and-the-save).
const (
	gcPercent   = 400
	memoryLimit = 1664 << 20 // bytes: 1.625 GiB
)

// tuneGC applies the settings unless the user chose their own through
// GOGC or GOMEMLIMIT, which the runtime has already read.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}
