package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-sim/berth/internal/manifest"
)

// TestLastAppliedCanonicalMatchesDecoded renders the last-applied
// annotation of every object in the repository's manifests (examples,
// scenario and conformance inputs) both ways, under several namespaces,
// and of some hand-written edge cases: the bytes must be identical.
func TestLastAppliedCanonicalMatchesDecoded(t *testing.T) {
	var objs []manifest.Object
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		o, _ := manifest.Decode(path, data) // bad inputs decode partly or not at all
		objs = append(objs, o...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{
		"apiVersion: v1\nkind: Pod\nmetadata: {}\n",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ''\n",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:\n    a: '<&>'\n  name: p\n  uid: u\n",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: x\n  resourceVersion: \"1\"\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"9007199254740993\"\n",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  activeDeadlineSeconds: 123456789012345\n  containers: []\n",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  activeDeadlineSeconds: 9007199254740993\n  containers: []\n",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n",
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"j"}}`,
	} {
		o, err := manifest.Decode("x.yaml", []byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		objs = append(objs, o...)
	}
	if len(objs) < 100 {
		t.Fatalf("only %d objects found", len(objs))
	}
	canonical := 0
	for _, o := range objs {
		m, ok := o.Object.(metav1.Object)
		if !ok {
			continue
		}
		for _, ns := range []string{"", "default", "a", "kube-system", "zzzz", "<x>", m.GetNamespace()} {
			m.SetNamespace(ns)
			want, err := lastAppliedDecoded(o, m)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := lastAppliedCanonical(o.Raw, o.Canonical, ns)
			if !ok {
				continue
			}
			canonical++
			if got != want {
				t.Fatalf("%s namespace %q:\n got %s\nwant %s", o.Source, ns, got, want)
			}
		}
	}
	if canonical == 0 {
		t.Fatal("the canonical path was never taken")
	}
}
