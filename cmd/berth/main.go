// Command berth simulates Kubernetes pod placement on AWS EKS offline.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/berth-sim/berth/internal/cli"
)

func main() {
	os.Exit(run())
}

// run executes the command. BERTH_CPUPROFILE names a file to write a CPU
// profile of the whole command to, BERTH_MEMPROFILE one for a heap profile
// taken when the command ends (for measuring what a user runs).
func run() int {
	tuneGC()
	if path := os.Getenv("BERTH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "BERTH_CPUPROFILE:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "BERTH_CPUPROFILE:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if path := os.Getenv("BERTH_MEMPROFILE"); path != "" {
		defer writeHeapProfile(path)
	}
	return cli.Execute()
}

func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "BERTH_MEMPROFILE:", err)
		return
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, "BERTH_MEMPROFILE:", err)
	}
}
