package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/internal/parallel"
)

// Export writes every stored object as multi-document YAML, as `kubectl
// get -o yaml` prints one object: apiVersion and kind set, fields in
// kubectl's order. Kinds come in the order of Kinds (namespaces first),
// objects by key, then the event log (docs/state.md#export). The output
// depends only on the state, so two exports diff cleanly.
func (s *State) Export(w io.Writer) error {
	fmt.Fprint(w, s.exportHeader())
	for _, part := range s.exportParts() {
		if _, err := w.Write(part.data); err != nil {
			return err
		}
	}
	return nil
}

// ExportDir writes the export into dir, one file per kind named after the
// resource ("pods.yaml", "nodepools.karpenter.sh.yaml", "events.yaml"); a
// kind with no objects has no file, and a file left by an earlier export of
// it is removed.
func (s *State) ExportDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	header := s.exportHeader()
	written := map[string]bool{}
	for _, part := range s.exportParts() {
		name := part.resource + ".yaml"
		written[name] = true
		if err := os.WriteFile(filepath.Join(dir, name), append([]byte(header), part.data...), 0o644); err != nil {
			return err
		}
	}
	for _, k := range append(append([]*Kind(nil), Kinds...), EventKind) {
		name := k.GroupResource() + ".yaml"
		if written[name] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func (s *State) exportHeader() string {
	return fmt.Sprintf("# berth export: cluster %q, Kubernetes %s, virtual time %s\n",
		s.Info.Name, s.Info.KubernetesVersion, s.Now.Sub(Epoch).Round(time.Second))
}

// exportPart is one kind's documents.
type exportPart struct {
	resource string
	data     []byte
}

func (s *State) exportParts() []exportPart {
	var parts []exportPart
	for _, k := range append(append([]*Kind(nil), Kinds...), EventKind) {
		objs := k.List(s)
		if len(objs) == 0 {
			continue
		}
		// Marshalling to YAML is nearly all of an export's time; each
		// object is independent, and the documents are joined in key order.
		docs := make([][]byte, len(objs))
		parallel.For(len(objs), 64, func(i int) { docs[i] = exportYAML(objs[i], k) })
		var buf bytes.Buffer
		for _, doc := range docs {
			buf.WriteString("---\n")
			buf.Write(doc)
		}
		parts = append(parts, exportPart{resource: k.GroupResource(), data: buf.Bytes()})
	}
	return parts
}

func exportYAML(obj runtime.Object, k *Kind) []byte {
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(k.GVK)
	data, err := yaml.Marshal(obj)
	if err != nil {
		// Every stored type marshals; a failure is a bug, not bad input.
		panic(fmt.Sprintf("export %s: %v", k.GVK.Kind, err))
	}
	return data
}
