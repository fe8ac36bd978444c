package chainsaw

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b/chainsaw-test.yaml", "a/x/chainsaw-test.yml", "a/other.yaml", "empty/readme.md"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Discover([]string{filepath.Join(dir, "a", "other.yaml"), dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a/other.yaml"), filepath.Join(dir, "a/x/chainsaw-test.yml"), filepath.Join(dir, "b/chainsaw-test.yaml")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := Discover([]string{filepath.Join(dir, "empty")}); err == nil || !strings.Contains(err.Error(), "no chainsaw-test.yaml") {
		t.Errorf("empty directory: %v", err)
	}
}
