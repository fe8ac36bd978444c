//go:build unix

package benchcli

import (
	"runtime"
	"syscall"
)

// peakRSS is the process's peak resident set in bytes.
func peakRSS() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss, true // bytes there
	}
	return ru.Maxrss * 1024, true
}
