package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/berth-sim/berth/internal/cluster"
)

// TestScenarios runs the golden walk-throughs in testdata/scenarios. Each
// block is one command line run in-process against a state private to the
// file (a trailing "< FILE" feeds FILE on stdin); its expected output (stdout and stderr as a terminal shows them, plus
// the exit status when it is not 0) follows the ---- line.
//
// Regenerate with: go test ./internal/cli -run TestScenarios -rewrite
// and review the diff before committing it.
//
// Every state a scenario's command leaves is also advanced idle and with
// the controllers, which must agree (checkIdle, idle_test.go).
func TestScenarios(t *testing.T) {
	var probes idleCounts
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		state := t.TempDir()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "run" {
				t.Fatalf("%s: unknown directive %q (want run)", d.Pos, d.Cmd)
			}
			return runLines(t, d, state, checkIdle(t, d, state, &probes))
		})
	})
	probes.check(t)
}

// TestBadInput runs the bad-input corpus in testdata/badinput: "run" blocks
// set a state up as in the scenarios; each command of a "bad" block must
// fail (non-zero exit) and leave the state directory byte for byte as it
// was. Regenerate with -rewrite and review the diff.
func TestBadInput(t *testing.T) {
	datadriven.Walk(t, "testdata/badinput", func(t *testing.T, path string) {
		state := t.TempDir()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "run":
				return runLines(t, d, state, nil)
			case "bad":
				return runLines(t, d, state, func(line string, code int, before, after map[string]string) {
					if code == 0 {
						t.Errorf("%s: %q succeeded; a bad-input case must fail", d.Pos, line)
					}
					if !equalFiles(before, after) {
						t.Errorf("%s: %q changed the state", d.Pos, line)
					}
				})
			default:
				t.Fatalf("%s: unknown directive %q (want run or bad)", d.Pos, d.Cmd)
				return ""
			}
		})
	})
}

// runLines runs each command line of d against state and returns what a
// terminal shows, plus "[exit status N]" for failures. check, when set, sees
// every command's exit code and the state directory before and after it.
func runLines(t *testing.T, d *datadriven.TestData, state string, check func(line string, code int, before, after map[string]string)) string {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		args, stdin, err := ScenarioCommand(repo, state, line)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		var before map[string]string
		if check != nil {
			before = readDir(t, state)
		}
		code := Run(args, strings.NewReader(stdin), &out, &out)
		if code != 0 {
			fmt.Fprintf(&out, "[exit status %d]\n", code)
		}
		if check != nil {
			check(line, code, before, readDir(t, state))
		}
	}
	// Paths in messages are shown relative to the repository.
	got := strings.ReplaceAll(out.String(), state, "$STATE")
	return strings.ReplaceAll(got, repo+"/", "")
}

// readDir returns every file under dir by relative path.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == cluster.LockFile {
			// The lock file is not state: empty, never rewritten, and
			// created by the first command of any kind (even a failing
			// one) that locks the directory.
			return nil
		}
		files[rel] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func equalFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
