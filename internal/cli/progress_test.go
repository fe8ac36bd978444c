package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestNoProgressOffTerminal: buffers (every scenario test) and plain files
// get no progress hook, so their output cannot change.
func TestNoProgressOffTerminal(t *testing.T) {
	if p := stderrProgress(&bytes.Buffer{}); p != nil {
		t.Fatalf("a buffer got a progress hook")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := stderrProgress(f); p != nil {
		t.Fatalf("a file got a progress hook")
	}
}
