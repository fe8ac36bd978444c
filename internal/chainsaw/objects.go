package chainsaw

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/internal/autoscaler/controller"
	"github.com/berth-sim/berth/internal/cluster"
)

// served are the kinds an assert can look up: what `berth get` serves,
// node group views included.
var served = append(cluster.ServedKinds()[:len(cluster.ServedKinds()):len(cluster.ServedKinds())], controller.NodeGroupKind)

// kindOf finds the served kind of an expected object's apiVersion and kind.
func kindOf(apiVersion, kind string) (*cluster.Kind, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	for _, k := range served {
		if k.GVK.Group == gv.Group && k.GVK.Kind == kind {
			return k, nil
		}
	}
	return nil, fmt.Errorf("no matches for kind %q in version %q", kind, apiVersion)
}

// loadExpected reads the objects an operation names: its inline resource
// or every document of its file (relative to the test's directory).
func loadExpected(dir string, op *ResourceOp) ([]map[string]any, error) {
	if op.Resource != nil {
		if op.File != "" {
			return nil, fmt.Errorf("set file or resource, not both")
		}
		return []map[string]any{op.Resource}, nil
	}
	if op.File == "" {
		return nil, fmt.Errorf("file or resource is required")
	}
	files, err := expand(resolve(dir, op.File))
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, doc := range splitDocuments(data) {
			var m map[string]any
			if err := yaml.Unmarshal(doc, &m); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(m) > 0 {
				out = append(out, m)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no objects", op.File)
	}
	return out, nil
}

func resolve(dir, file string) string {
	if filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(dir, file)
}

// candidate is one actual object an expected one is compared with.
type candidate struct {
	ref     string // kind/name or namespace/kind/name, for messages
	content map[string]any
}

// candidates lists the actual objects an expected object can match, as
// Chainsaw finds them: by name when it has one, else every object of the
// kind whose labels include the expected labels; namespaced kinds look in
// the expected namespace, else the test's.
func candidates(s *cluster.State, expected map[string]any, testNS string) ([]candidate, error) {
	apiVersion, _ := expected["apiVersion"].(string)
	kindName, _ := expected["kind"].(string)
	if apiVersion == "" || kindName == "" {
		return nil, fmt.Errorf("expected object needs apiVersion and kind")
	}
	k, err := kindOf(apiVersion, kindName)
	if err != nil {
		return nil, err
	}
	meta, _ := expected["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	if ns == "" {
		ns = testNS
	}
	var want map[string]string
	if l, ok := meta["labels"].(map[string]any); ok {
		want = map[string]string{}
		for key, v := range l {
			want[key] = fmt.Sprint(v)
		}
	}
	var out []candidate
	for _, obj := range k.List(s) {
		m, ok := obj.(metav1.Object)
		if !ok {
			continue
		}
		if k.Namespaced && m.GetNamespace() != ns {
			continue
		}
		if name != "" && m.GetName() != name {
			continue
		}
		if name == "" && !hasLabels(m.GetLabels(), want) {
			continue
		}
		content, err := toContent(k, obj)
		if err != nil {
			return nil, err
		}
		ref := strings.ToLower(k.GVK.Kind) + "/" + m.GetName()
		if k.Namespaced {
			ref = m.GetNamespace() + "/" + ref
		}
		out = append(out, candidate{ref: ref, content: content})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ref < out[j].ref })
	return out, nil
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// toContent renders an object as the API server serves it: JSON fields,
// apiVersion and kind set, managed fields hidden.
func toContent(k *cluster.Kind, obj any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	content := map[string]any{}
	if err := json.Unmarshal(data, &content); err != nil {
		return nil, err
	}
	content["apiVersion"] = k.GVK.GroupVersion().String()
	content["kind"] = k.GVK.Kind
	if meta, ok := content["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	return content, nil
}
