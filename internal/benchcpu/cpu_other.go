//go:build !unix

// Package benchcpu reads the CPU time the process has used; off Unix it is
// not measured.
package benchcpu

import "time"

// Process is not measured off Unix.
func Process() (d time.Duration, ok bool) { return 0, false }
