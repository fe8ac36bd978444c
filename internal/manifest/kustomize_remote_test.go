package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRefuseRemote(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: nginx}]}\n"
	write("base/pod.yaml", pod)
	write("base/kustomization.yaml", "resources: [pod.yaml]\n")
	// A local directory whose name looks like a host is local.
	write("overlay/github.com/team/kustomization.yaml", "resources: [../../../base]\n")
	write("overlay/kustomization.yaml", "resources: [github.com/team]\nnamePrefix: x-\n")
	objs, err := LoadKustomize(filepath.Join(dir, "overlay"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("got %d objects, want 1", len(objs))
	}
	write("remote/kustomization.yaml", "resources: [../base]\ncomponents: [\"git::https://example.com/c.git\"]\n")
	_, err = LoadKustomize(filepath.Join(dir, "remote"))
	if err == nil || !strings.Contains(err.Error(), `components[0] "git::https://example.com/c.git": berth reads only local files`) {
		t.Fatalf("error = %v", err)
	}
	for e, want := range map[string]bool{
		"https://x.io/a.yaml": true, "git@github.com:o/r.git": true, "github.com/o/r//d?ref=v1": true,
		"gitlab.com/o/r": true, "pod.yaml": false, "../base": false, "dir/pod.yaml": false,
	} {
		if got := isRemoteRef(e) || looksLikeHost(e); got != want {
			t.Errorf("%q: remote = %v, want %v", e, got, want)
		}
	}
}
