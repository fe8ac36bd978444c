package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// LoadKustomize builds dir the way `kubectl apply -k` does (the Kustomize
// library kubectl embeds, with kubectl's options: default plugin settings and
// the legacy ordering that puts Namespaces first) and decodes the result.
// Sources name dir as the file; document numbers and lines refer to the built
// output, which is what `kubectl kustomize dir` prints.
//
// berth is offline: before Kustomize runs, every kustomization reachable
// from dir is checked and a remote resource, base or component is refused,
// because Kustomize would otherwise fetch it over HTTP or run `git`.
func LoadKustomize(dir string) ([]Object, error) {
	if err := refuseRemote(dir, map[string]bool{}); err != nil {
		return nil, err
	}
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

// kustomizationNames are the file names Kustomize looks for, in its order.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// kustomizationRefs are the fields whose entries Kustomize loads as files,
// directories or remote targets.
type kustomizationRefs struct {
	Resources      []string `json:"resources"`
	Bases          []string `json:"bases"`
	Components     []string `json:"components"`
	Generators     []string `json:"generators"`
	Transformers   []string `json:"transformers"`
	Validators     []string `json:"validators"`
	Configurations []string `json:"configurations"`
	Crds           []string `json:"crds"`
}

// refuseRemote walks dir's kustomization and the local directories it
// refers to. Problems other than remote references (a missing file, bad
// YAML) are left for Kustomize to report in its own words.
func refuseRemote(dir string, seen map[string]bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil || seen[abs] {
		return nil
	}
	seen[abs] = true
	var file string
	var data []byte
	for _, name := range kustomizationNames {
		p := filepath.Join(dir, name)
		if data, err = os.ReadFile(p); err == nil {
			file = p
			break
		}
	}
	if file == "" {
		return nil
	}
	var refs kustomizationRefs
	if yaml.Unmarshal(data, &refs) != nil {
		return nil
	}
	for _, list := range []struct {
		field   string
		entries []string
	}{{"resources", refs.Resources}, {"bases", refs.Bases}, {"components", refs.Components},
		{"generators", refs.Generators}, {"transformers", refs.Transformers}, {"validators", refs.Validators},
		{"configurations", refs.Configurations}, {"crds", refs.Crds}} {
		for i, e := range list.entries {
			local := filepath.Join(dir, e)
			if isRemoteRef(e) || looksLikeHost(e) {
				// A local directory that merely looks like an address is local.
				if _, statErr := os.Stat(local); statErr != nil || strings.Contains(e, "://") {
					return fmt.Errorf("%s: %s[%d] %q: berth reads only local files; remote kustomize resources are not supported",
						file, list.field, i, e)
				}
			}
			if info, statErr := os.Stat(local); statErr == nil && info.IsDir() {
				if err := refuseRemote(local, seen); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// isRemoteRef reports whether Kustomize would treat e as a URL or a git
// repository: a scheme (https://, file://, ssh://), the git:: prefix, an
// scp-like git@host:path, or a bare hosting-service address.
func isRemoteRef(e string) bool {
	if strings.Contains(e, "://") || strings.HasPrefix(e, "git::") || strings.HasPrefix(e, "git@") {
		return true
	}
	for _, host := range []string{"github.com", "gitlab.com", "bitbucket.org", "dev.azure.com", "ssh.dev.azure.com"} {
		if e == host || strings.HasPrefix(e, host+"/") || strings.HasPrefix(e, host+":") {
			return true
		}
	}
	return strings.Contains(e, "?ref=") || strings.Contains(e, "?version=") || strings.Contains(e, ".git//")
}

// looksLikeHost reports a path whose first segment reads as a host name
// (example.com/team/app): Kustomize may try such a missing path as a git
// repository, so it is refused unless it exists locally.
func looksLikeHost(e string) bool {
	first, rest, ok := strings.Cut(e, "/")
	return ok && rest != "" && first != "." && first != ".." && strings.Contains(first, ".")
}
