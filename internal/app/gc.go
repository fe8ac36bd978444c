package app

import (
	"math"
	"runtime/debug"
	"sync"
)

// A command that only prints (get, describe: Options.PrintOnly) loads the
// state, prints part of it and exits: what it allocates stays live to the
// end, so every collection after the load marks the whole state again for
// nothing (a third of `get nodes` on a 5,000-node cluster). While one runs,
// the collector is off, provided a memory limit is set (the CLI sets one,
// cmd/berth/gc.go): the soft limit still makes it collect should the heap
// grow near it. Commands of one process may overlap (tests), so the
// setting is counted.
var readGC struct {
	sync.Mutex
	readers int
	percent int
}

// pauseGC turns the collector off for a read-only command; the function it
// returns turns it back on when the last such command ends.
func pauseGC() (resume func()) {
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		return func() {}
	}
	readGC.Lock()
	defer readGC.Unlock()
	if readGC.readers == 0 {
		readGC.percent = debug.SetGCPercent(-1)
	}
	readGC.readers++
	var once sync.Once
	return func() {
		once.Do(func() {
			readGC.Lock()
			defer readGC.Unlock()
			if readGC.readers--; readGC.readers == 0 {
				debug.SetGCPercent(readGC.percent)
			}
		})
	}
}
