package cluster

import (
	"math"
	"runtime"
	"runtime/debug"
	"sync"
)

// After a whole load the heap holds the cluster, nearly all of it live,
// but the collector's pacer has not measured it: with the percentage put
// back it sets its next goal from the few megabytes of the last collection
// and at once marks the whole state again (a tenth of an idle `advance` on
// a 5,000-node cluster). resumeGC puts the collector back as the load
// found it, except that the first collection waits until the heap has
// grown by that percentage of what the load left (a soft memory limit
// marks the spot; a sentinel's finalizer, run by that collection, restores
// the limit). Loads of one process may overlap (tests): while one is
// pending, later loads just restore the percentage.
var gcAfterLoad struct {
	sync.Mutex
	pending bool
}

// resumeGC ends a load's pause of the collector; percent is the setting
// before the pause.
func resumeGC(percent int) {
	gcAfterLoad.Lock()
	defer gcAfterLoad.Unlock()
	if percent < 0 || gcAfterLoad.pending {
		debug.SetGCPercent(percent)
		return
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	limit := debug.SetMemoryLimit(-1)
	inUse := m.Sys - m.HeapReleased
	goal := inUse + m.HeapAlloc/100*uint64(percent)
	if goal >= uint64(limit) || goal > math.MaxInt64 {
		// The limit comes first anyway.
		debug.SetGCPercent(percent)
		return
	}
	gcAfterLoad.pending = true
	debug.SetMemoryLimit(int64(goal))
	sentinel := new([64]byte)
	runtime.SetFinalizer(sentinel, func(*[64]byte) {
		gcAfterLoad.Lock()
		defer gcAfterLoad.Unlock()
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(percent)
		gcAfterLoad.pending = false
	})
}
