package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ScenarioCommand turns one line of a golden scenario ("berth get pods",
// "berth apply -f - < testdata/x.yaml") into the arguments for Run against
// the state in stateDir and the text to feed on stdin. Paths under
// examples/ and testdata/ are resolved in the repository at repo, so the
// golden tests and the conformance module's describe differential replay
// the same files the same way.
func ScenarioCommand(repo, stateDir, line string) (args []string, stdin string, err error) {
	words, err := SplitWords(line)
	if err != nil {
		return nil, "", err
	}
	if len(words) == 0 || words[0] != "berth" {
		return nil, "", fmt.Errorf("command must start with berth: %q", line)
	}
	if n := len(words); n >= 3 && words[n-2] == "<" {
		data, err := os.ReadFile(filepath.Join(repo, "internal/cli", words[n-1]))
		if err != nil {
			return nil, "", err
		}
		stdin, words = string(data), words[:n-2]
	}
	args = []string{"--state", stateDir}
	for _, w := range words[1:] {
		switch {
		case strings.HasPrefix(w, "examples/"):
			w = filepath.Join(repo, w)
		case strings.HasPrefix(w, "testdata/"):
			w = filepath.Join(repo, "internal/cli", w)
		}
		args = append(args, w)
	}
	return args, stdin, nil
}
