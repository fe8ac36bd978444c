package manifest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecode feeds arbitrary bytes through the decoder and the validator.
// Neither may panic, and every reported problem must be one line that names
// the file.
func FuzzDecode(f *testing.F) {
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(path, string(filepath.Separator)+"fuzz"+string(filepath.Separator)) {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json", ".JSON":
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			f.Add(data)
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"",
		"---\n",
		"apiVersion: v1\nkind: List\nitems: [1, {kind: Pod}]\n",
		"apiVersion: v1\nkind: PodList\nitems: 3\n",
		"apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: r, version: 1.30}\n",
		"apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: r}\nnodeGroups: [null, {name: x, taints: {k: \"a:b:c\"}}]\n",
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1e3\"}}}]}}",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {selector: {matchExpressions: [{key: a, operator: In}]}, template: {spec: {affinity: {podAffinity: {}}}}}\n",
		"apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: {taints: [{key: a, effect: NoSchedule}, {key: a, effect: NoSchedule}]}\n",
		"\ufeff{\"apiVersion\":\"v1\"} [1]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := Decode("fuzz.yaml", data)
		checkLines(t, err)
		for _, o := range objs {
			_ = o.Name()
			_ = o.Namespace()
			_ = o.Source.String()
			checkLines(t, Validate(o))
		}
	})
}

func checkLines(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, "fuzz.yaml") {
			t.Fatalf("error line does not name the file: %q\nfull error:\n%v", line, err)
		}
	}
}
