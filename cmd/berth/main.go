// Command berth simulates Kubernetes pod placement on AWS EKS offline.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/berth-sim/berth/internal/cli"
)

func main() {
	os.Exit(run())
}

// run executes the command; BERTH_CPUPROFILE names a file to write a CPU
// profile of the whole command to (for measuring what a user runs).
func run() int {
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
	return cli.Execute()
}
