//go:build !unix

package provisioning

import "time"

// processCPU is not measured off Unix.
func processCPU() (time.Duration, bool) { return 0, false }
