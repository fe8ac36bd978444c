package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestTuneGCRespectsUserSettings(t *testing.T) {
	tests := []struct {
		name, gogc, memlimit string
		wantPercent          int
		wantLimit            int64
	}{
		{name: "defaults", wantPercent: gcPercent, wantLimit: memoryLimit},
		{name: "user GOGC", gogc: "150", wantPercent: 150, wantLimit: memoryLimit},
		{name: "user GOMEMLIMIT", memlimit: "4GiB", wantPercent: gcPercent, wantLimit: 4 << 30},
		{name: "both", gogc: "off", memlimit: "1GiB", wantPercent: -1, wantLimit: 1 << 30},
	}
	oldPercent := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.gogc)
			t.Setenv("GOMEMLIMIT", tt.memlimit)
			// What the runtime would have read from the environment at start.
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			if tt.gogc == "150" {
				debug.SetGCPercent(150)
			}
			if tt.gogc == "off" {
				debug.SetGCPercent(-1)
			}
			switch tt.memlimit {
			case "4GiB":
				debug.SetMemoryLimit(4 << 30)
			case "1GiB":
				debug.SetMemoryLimit(1 << 30)
			}
			tuneGC()
			percent := debug.SetGCPercent(100)
			limit := debug.SetMemoryLimit(-1)
			if percent != tt.wantPercent || limit != tt.wantLimit {
				t.Fatalf("GC percent %d, memory limit %d; want %d, %d", percent, limit, tt.wantPercent, tt.wantLimit)
			}
		})
	}
}
