package benchcli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-sim/berth/internal/cli"
)

// TestWriteAppliesAndBindsEveryPod applies a small file as the benchmarks
// apply the large one: every pod is created and bound, none by a controller.
func TestWriteAppliesAndBindsEveryPod(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"pods", func(b *bytes.Buffer) error { return Write(b, 6, 40, 1) }},
		{"deployments", func(b *bytes.Buffer) error { return WriteDeployments(b, 6, 4, 10, 1) }},
	} {
		write := tc.write
		t.Run(tc.name, func(t *testing.T) {
			var a, again bytes.Buffer
			if err := write(&a); err != nil {
				t.Fatal(err)
			}
			_ = write(&again)
			if !bytes.Equal(a.Bytes(), again.Bytes()) {
				t.Fatal("not deterministic")
			}
			applyAndCount(t, a.Bytes(), 40)
		})
	}
}

func applyAndCount(t *testing.T, data []byte, want int) {
	dir := t.TempDir()
	file := filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	var out, errOut bytes.Buffer
	if code := cli.Run([]string{"--state", state, "apply", "-f", file}, nil, &out, &errOut); code != 0 {
		t.Fatalf("apply exited %d: %s", code, errOut.String())
	}
	list := func(args ...string) []string {
		out.Reset()
		if code := cli.Run(append([]string{"--state", state, "get", "pods", "-A", "-o", "name"}, args...), nil, &out, &errOut); code != 0 {
			t.Fatalf("get exited %d: %s", code, errOut.String())
		}
		return strings.Fields(out.String())
	}
	if all, bound := list(), list("--field-selector", "spec.nodeName!="); len(all) != want || len(bound) != want {
		t.Errorf("%d pods, %d bound; want %d and %d", len(all), len(bound), want, want)
	}
}
