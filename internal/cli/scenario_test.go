package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScenarios runs the golden walk-throughs in testdata/scenarios. Each
// block is one command line run in-process against a state private to the
// file (a trailing "< FILE" feeds FILE on stdin); its expected output (stdout and stderr as a terminal shows them, plus
// the exit status when it is not 0) follows the ---- line.
//
// Regenerate with: go test ./internal/cli -run TestScenarios -rewrite
// and review the diff before committing it.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		state := t.TempDir()
		repo, err := filepath.Abs("../..")
		if err != nil {
			t.Fatal(err)
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "run" {
				t.Fatalf("%s: unknown directive %q (want run)", d.Pos, d.Cmd)
			}
			var out bytes.Buffer
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				words, err := SplitWords(line)
				if err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
				if len(words) == 0 || words[0] != "berth" {
					t.Fatalf("%s: command must start with berth: %q", d.Pos, line)
				}
				stdin := ""
				if n := len(words); n >= 3 && words[n-2] == "<" {
					data, err := os.ReadFile(filepath.Join(repo, "internal/cli", words[n-1]))
					if err != nil {
						t.Fatalf("%s: %v", d.Pos, err)
					}
					stdin, words = string(data), words[:n-2]
				}
				args := []string{"--state", state}
				for _, w := range words[1:] {
					switch {
					case strings.HasPrefix(w, "examples/"):
						w = filepath.Join(repo, w)
					case strings.HasPrefix(w, "testdata/"):
						w = filepath.Join(repo, "internal/cli", w)
					}
					args = append(args, w)
				}
				if code := Run(args, strings.NewReader(stdin), &out, &out); code != 0 {
					fmt.Fprintf(&out, "[exit status %d]\n", code)
				}
			}
			// Paths in messages are shown relative to the repository.
			got := strings.ReplaceAll(out.String(), state, "$STATE")
			return strings.ReplaceAll(got, repo+"/", "")
		})
	})
}
