package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestReport runs the goldens in testdata/report: "run" blocks set a state
// up as the scenarios do; a "report" block runs its berth command line
// with the word FILE standing for a fresh file, and shows the command's
// output, then the page it wrote without its style sheet (the stable
// parts: every name, number and message on the page, docs/report.md).
//
// Regenerate with: go test ./internal/cli -run TestReport -rewrite
// and review the diff.
func TestReport(t *testing.T) {
	datadriven.Walk(t, "testdata/report", func(t *testing.T, path string) {
		state := t.TempDir()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "run":
				return runLines(t, d, state, nil)
			case "report":
				return reportBlock(t, d, state)
			default:
				t.Fatalf("%s: unknown directive %q (want run or report)", d.Pos, d.Cmd)
				return ""
			}
		})
	})
}

var styleSheet = regexp.MustCompile(`(?s)<style>.*?</style>`)

func reportBlock(t *testing.T, d *datadriven.TestData, state string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.html")
	words, err := SplitWords(strings.TrimSpace(d.Input))
	if err != nil || len(words) == 0 || words[0] != "berth" {
		t.Fatalf("%s: want one berth command line: %q", d.Pos, d.Input)
	}
	args := []string{"--state", state}
	for _, w := range words[1:] {
		if w == "FILE" {
			w = file
		}
		args = append(args, w)
	}
	var out bytes.Buffer
	if code := Run(args, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("%s: exit status %d: %s", d.Pos, code, out.String())
	}
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(out.String(), file, "FILE")
	return got + "\n" + styleSheet.ReplaceAllString(string(page), "<style>…</style>")
}
