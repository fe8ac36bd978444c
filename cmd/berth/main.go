// Command berth simulates Kubernetes pod placement on AWS EKS offline.
package main

import (
	"os"

	"github.com/berth-sim/berth/internal/cli"
)

func main() {
	os.Exit(cli.Execute())
}
