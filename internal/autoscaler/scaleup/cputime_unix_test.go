//go:build unix

package scaleup

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the test process has used:
// on a shared host the wall time of a benchmark mostly measures the
// neighbours, so BenchmarkPlan5000x50 also reports CPU per decision.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
