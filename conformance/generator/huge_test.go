package generator

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-sim/berth/internal/cli"
)

// TestHugeSchedulesEveryReplica applies a small Huge file end to end: every
// replica is created and bound, and no node is treated as an EC2 instance
// (which would cap pods by ENI limits).
func TestHugeSchedulesEveryReplica(t *testing.T) {
	data, err := Huge(12, 6, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Huge(12, 6, 20, 1)
	if !bytes.Equal(data, again) {
		t.Fatal("Huge is not deterministic")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	var out, errOut bytes.Buffer
	if code := cli.Run([]string{"--state", state, "apply", "-f", file}, nil, &out, &errOut); code != 0 {
		t.Fatalf("apply exited %d: %s", code, errOut.String())
	}
	count := func(args ...string) int {
		out.Reset()
		if code := cli.Run(append([]string{"--state", state, "get", "pods", "-A", "-o", "name"}, args...), nil, &out, &errOut); code != 0 {
			t.Fatalf("get exited %d: %s", code, errOut.String())
		}
		return len(strings.Fields(out.String()))
	}
	if all, bound := count(), count("--field-selector", "spec.nodeName!="); all != 120 || bound != 120 {
		t.Errorf("%d pods, %d bound; want 120 and 120", all, bound)
	}
}
