package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := New("1.30", 7)
	s.Nodes["n1"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"a": "b"}}}
	first := s.Rand.Uint64()
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Info.KubernetesVersion != "1.30" || got.Nodes["n1"].Labels["a"] != "b" {
		t.Errorf("round trip lost data: %+v", got.Info)
	}
	// The random source resumes where it stopped.
	if a, b := s.Rand.Uint64(), got.Rand.Uint64(); a != b || a == first {
		t.Errorf("random source did not resume: %d vs %d", a, b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != StateFile {
		t.Errorf("state dir holds %v, want only %s (no temporary files left)", entries, StateFile)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); !errors.Is(err, ErrNoState) {
		t.Errorf("empty dir: %v, want ErrNoState", err)
	}
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte(`{"formatVersion": 99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "berth reset") {
		t.Errorf("future format: %v, want a reset hint", err)
	}
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte(`{`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a berth state file") {
		t.Errorf("torn file: %v", err)
	}
}

func TestRandIsDeterministic(t *testing.T) {
	a, b := NewRand(42), NewRand(42)
	for i := 0; i < 100; i++ {
		if a.Uint64() != b.Uint64() {
			t.Fatal("same seed, different sequence")
		}
	}
	c, d := NewRand(43), NewRand(42)
	if d.Uint64() == c.Uint64() {
		t.Error("different seeds gave the same first number")
	}
	s := New("", 1)
	name := s.GenerateName("ui-659df48c56-")
	if len(name) != len("ui-659df48c56-")+5 || strings.ContainsAny(name[len(name)-5:], "aeiou013") {
		t.Errorf("GenerateName = %q", name)
	}
	uid := s.NewUID()
	if len(uid) != 36 || uid[14] != '4' {
		t.Errorf("NewUID = %q, want an RFC 4122 version-4 shape", uid)
	}
}
