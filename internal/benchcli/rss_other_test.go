//go:build !unix

package benchcli

// peakRSS is not measured off Unix.
func peakRSS() (int64, bool) { return 0, false }
