package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExport(t *testing.T) {
	s := syntheticState(2, 2, 2)
	s.Namespaces["default"] = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	var a, b bytes.Buffer
	if err := s.Export(&a); err != nil {
		t.Fatal(err)
	}
	if err := s.Clone().Export(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatal("two exports of the same state differ")
	}
	out := a.String()
	// Namespaces first (registry order), objects by key, events last; every
	// document has its type.
	ns, node, pod, ev := strings.Index(out, "kind: Namespace"), strings.Index(out, "kind: Node"), strings.Index(out, "kind: Pod"), strings.Index(out, "kind: Event")
	if !strings.HasPrefix(out, "# berth export: cluster \"\", Kubernetes 1.34, virtual time 2s\n---\n") || ns < 0 || !(ns < node && node < pod && pod < ev) {
		t.Fatalf("export order wrong:\n%s", out)
	}
	if strings.Index(out, "name: web-0") > strings.Index(out, "name: web-1") {
		t.Errorf("pods not by key")
	}
	if got, want := strings.Count(out, "\n---\n"), 1+2+2+2; got != want {
		t.Errorf("%d documents, want %d", got, want)
	}
	dir := t.TempDir()
	stale := filepath.Join(dir, "deployments.apps.yaml")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ExportDir(dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "events.yaml namespaces.yaml nodes.yaml pods.yaml" {
		t.Errorf("export dir holds %v", names)
	}
	pods, _ := os.ReadFile(filepath.Join(dir, "pods.yaml"))
	if !strings.HasPrefix(string(pods), "# berth export") || strings.Count(string(pods), "kind: Pod\n") != 2 {
		t.Errorf("pods.yaml:\n%s", pods)
	}
}
