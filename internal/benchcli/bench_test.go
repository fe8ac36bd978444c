package benchcli

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/berth-sim/berth/internal/benchcpu"
	"github.com/berth-sim/berth/internal/cli"
)

// The sizes of issue 14's targets (docs/performance.md).
const (
	benchNodes = 5000
	benchPods  = 10000
	// The 100,000-pod load: Deployments of equal size.
	hugeDeployments = 200
	hugeReplicas    = 500
	seed            = 1
)

// shared is the scenario file and the settled state the read and advance
// benchmarks start from, built by the first benchmark that needs it (never
// by tests) and removed by TestMain.
var shared struct {
	once       sync.Once
	dir        string
	file       string
	state      string
	err        error
	applyCPU   float64
	applyBytes int
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// settledState applies the 5,000-node / 10,000-pod file once and returns
// the state directory.
func settledState(b *testing.B) string {
	b.Helper()
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "berth-benchcli-")
		if shared.err != nil {
			return
		}
		shared.file = filepath.Join(shared.dir, "scenario.yaml")
		if shared.err = writeFile(shared.file, func(w io.Writer) error { return Write(w, benchNodes, benchPods, seed) }); shared.err != nil {
			return
		}
		shared.state = filepath.Join(shared.dir, "state")
		shared.err = berth(shared.state, "apply", "-f", shared.file)
	})
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	return shared.state
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// berth runs one command line as the binary does, output discarded.
func berth(state string, args ...string) error {
	var errOut bytes.Buffer
	if code := cli.Run(append([]string{"--state", state}, args...), nil, io.Discard, &errOut); code != 0 {
		return fmt.Errorf("berth %v: exit %d: %s", args, code, errOut.String())
	}
	return nil
}

// run times b.N runs of one command line against state, reporting CPU time
// per run beside wall time (read cpu-ns/op on a shared machine).
func run(b *testing.B, state string, args ...string) {
	b.Helper()
	b.ReportAllocs()
	cpu0, _ := benchcpu.Process()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := berth(state, args...); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu1, _ := benchcpu.Process()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkApplyProfile is `berth apply -f` of 5,000 nodes and 10,000
// pending pods into a new state: parse, admit, simulate until settled, save.
func BenchmarkApplyProfile(b *testing.B) {
	benchApply(b, func(w io.Writer) error { return Write(w, benchNodes, benchPods, seed) }, benchPods)
}

// BenchmarkApply100k applies 5,000 nodes and 200 Deployments of 500
// replicas: 100,000 pods created by the controllers and scheduled. The
// peak-RSS metric is the whole benchmark process's.
func BenchmarkApply100k(b *testing.B) {
	benchApply(b, func(w io.Writer) error {
		return WriteDeployments(w, benchNodes, hugeDeployments, hugeReplicas, seed)
	}, hugeDeployments*hugeReplicas)
}

func benchApply(b *testing.B, write func(io.Writer) error, pods int) {
	dir := b.TempDir()
	file := filepath.Join(dir, "scenario.yaml")
	if err := writeFile(file, write); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0, _ := benchcpu.Process()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		state := filepath.Join(dir, fmt.Sprint("state-", i))
		if err := berth(state, "apply", "-f", file); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := os.RemoveAll(state); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	cpu1, _ := benchcpu.Process()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(pods)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
	if rss, ok := peakRSS(); ok {
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
	}
}

// BenchmarkGetNodes5k is `berth get nodes` on the settled 5,000-node state.
func BenchmarkGetNodes5k(b *testing.B) { run(b, settledState(b), "get", "nodes") }

// BenchmarkGetPods10k is `berth get pods -A` on the settled state.
func BenchmarkGetPods10k(b *testing.B) { run(b, settledState(b), "get", "pods", "-A") }

// BenchmarkDescribeNode5k is `berth describe node` of one node of the
// settled state (its pods, requests and events among 10,000 pods).
func BenchmarkDescribeNode5k(b *testing.B) {
	run(b, settledState(b), "describe", "node", NodeName(42))
}

// BenchmarkDescribePod10k is `berth describe pod` of one pod of the settled state.
func BenchmarkDescribePod10k(b *testing.B) {
	run(b, settledState(b), "describe", "pod", "-n", namespaces[0], "pod-00042")
}

// BenchmarkAdvanceIdle5k is `berth advance 1s` on a copy of the settled
// state: every pod bound, nothing due, so it measures loading, the idle
// controllers' pass and saving.
func BenchmarkAdvanceIdle5k(b *testing.B) {
	src := settledState(b)
	state := filepath.Join(b.TempDir(), "state")
	if err := copyDir(src, state); err != nil {
		b.Fatal(err)
	}
	run(b, state, "advance", "1s")
}

// copyDir copies a state directory file by file, whatever files the state
// store keeps there.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
