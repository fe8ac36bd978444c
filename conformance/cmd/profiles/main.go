// Command profiles writes the benchmark profiles as plain multi-document
// YAML files that `berth apply -f` reads, for the end-to-end side-by-side
// measurement (cmd/e2e, docs/performance.md):
//
//	cd conformance && go run ./cmd/profiles -out /tmp/prof
//
// writes basic.yaml, affinity.yaml, spread.yaml, taints.yaml and mixed.yaml
// (5,000 nodes / 10,000 pending pods each, seed 1): the generator's Profile
// readied by generator.ForApply, so that every pod survives berth's
// controllers. -huge also writes huge.yaml, the 100,000-pod load (Node
// manifests and Deployments, generator.Huge).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/berth-sim/berth/conformance/generator"
	"github.com/berth-sim/berth/internal/benchcli"
)

func main() {
	out := flag.String("out", "", "directory to write the files to (required)")
	nodes := flag.Int("nodes", 5000, "nodes per profile")
	pods := flag.Int("pods", 10000, "pending pods per profile")
	seed := flag.Uint64("seed", 1, "generator seed")
	profiles := flag.String("profiles", strings.Join(generator.Profiles, ","), "comma-separated profiles (empty: none)")
	huge := flag.Bool("huge", false, "also write huge.yaml: Node manifests and Deployments")
	hugeNodes := flag.Int("huge-nodes", 5000, "nodes of huge.yaml")
	hugeDeployments := flag.Int("huge-deployments", 200, "Deployments of huge.yaml")
	hugeReplicas := flag.Int("huge-replicas", 500, "replicas of each Deployment of huge.yaml")
	flag.Parse()
	if *out == "" {
		fail(fmt.Errorf("-out is required"))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	for _, name := range strings.Split(*profiles, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		sc, err := generator.Profile(name, *nodes, *pods, *seed)
		if err != nil {
			fail(err)
		}
		generator.ForApply(sc)
		data, err := generator.YAML(sc)
		if err != nil {
			fail(err)
		}
		write(filepath.Join(*out, name+".yaml"), data)
	}
	if *huge {
		// The same generator as the main module's 100k benchmark
		// (BenchmarkApply100k), so the file and the benchmark measure one load.
		var b bytes.Buffer
		if err := benchcli.WriteDeployments(&b, *hugeNodes, *hugeDeployments, *hugeReplicas, *seed); err != nil {
			fail(err)
		}
		write(filepath.Join(*out, "huge.yaml"), b.Bytes())
	}
}

func write(path string, data []byte) {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s (%.1f MB)\n", path, float64(len(data))/1e6)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "profiles:", err)
	os.Exit(1)
}
