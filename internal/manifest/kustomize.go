package manifest

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// LoadKustomize builds dir the way `kubectl apply -k` does (the Kustomize
// library kubectl embeds, with kubectl's options: default plugin settings and
// the legacy ordering that puts Namespaces first) and decodes the result.
// Sources name dir as the file; document numbers and lines refer to the built
// output, which is what `kubectl kustomize dir` prints.
func LoadKustomize(dir string) ([]Object, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	resources, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", dir, strings.Join(strings.Fields(err.Error()), " "))
	}
	out, err := resources.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	objs, err := Decode(dir, out)
	if err != nil {
		return nil, err
	}
	return objs, nil
}
