package cli

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/berth-sim/berth/examples"
)

// demoSteps is seed 000's walk-through. "{pending}" stands for the name of the
// first Pending ui pod, found the way the seed finds it (a field selector).
var demoSteps = []string{
	"apply -f examples/graviton/cluster.yaml",
	"get nodes -L eks.amazonaws.com/nodegroup -L kubernetes.io/arch",
	"apply -k examples/graviton/base",
	"describe pod --namespace ui --selector app.kubernetes.io/name=ui",
	"apply -k examples/graviton/nodeselector-wo-toleration",
	"--namespace ui rollout status --watch=false deployment/ui",
	"get pod --namespace ui -l app.kubernetes.io/name=ui",
	"describe pod {pending} -n ui",
	"apply -k examples/graviton/nodeselector-w-toleration",
	"--namespace ui rollout status deployment/ui --timeout=120s",
	"get pod --namespace ui -l app.kubernetes.io/name=ui -o wide",
	"describe pod --namespace ui -l app.kubernetes.io/name=ui",
	"describe node --selector kubernetes.io/arch=arm64",
}

// runDemo copies the embedded example to a temporary directory and runs the
// steps against a throw-away state there, echoing each command.
func runDemo(g *globals, out, errOut io.Writer) error {
	dir, err := os.MkdirTemp("", "berth-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := copyFS(examples.FS, filepath.Join(dir, "examples")); err != nil {
		return err
	}
	state := filepath.Join(dir, ".berth")
	for _, step := range demoSteps {
		if strings.Contains(step, "{pending}") {
			var name strings.Builder
			args := []string{"--state", state, "get", "pod", "-n", "ui", "--field-selector=status.phase=Pending",
				"-o", "jsonpath={.items[0].metadata.name}"}
			if code := Run(args, nil, &name, errOut); code != 0 {
				return ExitError{Code: code}
			}
			step = strings.ReplaceAll(step, "{pending}", name.String())
		}
		fmt.Fprintf(out, "$ berth %s\n", step)
		words, err := SplitWords(step)
		if err != nil {
			return err
		}
		for i, w := range words {
			if strings.HasPrefix(w, "examples/") {
				words[i] = filepath.Join(dir, w)
			}
		}
		args := append([]string{"--state", state, "--seed", fmt.Sprint(g.seed)}, words...)
		if code := Run(args, nil, out, out); code != 0 {
			return ExitError{Code: code}
		}
		fmt.Fprintln(out)
	}
	return nil
}

func copyFS(src fs.FS, dst string) error {
	return fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, path)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(src, path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
