package app

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/why"
)

// WhyRequest is `berth why`.
type WhyRequest struct {
	// Arg is POD, pod/NAME, deployment/NAME or statefulset/NAME.
	Arg       string
	Namespace string
	Output    string
	NoFixes   bool
}

// Why explains a pod's placement, or the pending pods of a workload, from
// the saved state; nothing is written (docs/why.md).
func (a *App) Why(r WhyRequest) error {
	switch r.Output {
	case "", "json", "yaml":
	default:
		return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,yaml", r.Output)
	}
	ns := a.namespaceOr(r.Namespace)
	kind, name, ok := splitTypeName(r.Arg)
	if !ok {
		kind, name = "pod", r.Arg
	}
	opts := why.Options{NoFixes: r.NoFixes}
	var reports []*why.Report
	switch kind {
	case "pod", "pods", "po":
		p := a.state.Pods[cluster.Key(ns, name)]
		if p == nil {
			return fmt.Errorf("Error from server (NotFound): pods %q not found", name)
		}
		rep, err := why.Pod(a.state, p, opts)
		if err != nil {
			return err
		}
		reports = []*why.Report{rep}
	default:
		var err error
		if reports, err = why.Workload(a.state, kind, ns, name, opts); err != nil {
			return err
		}
		if len(reports) == 0 && r.Output == "" {
			fmt.Fprintf(a.opts.Out, "%s/%s has no pending pods.\n", kind, name)
			return nil
		}
	}
	switch r.Output {
	case "json":
		b, err := json.MarshalIndent(reports, "", "    ")
		if err != nil {
			return err
		}
		fmt.Fprintln(a.opts.Out, string(b))
	case "yaml":
		b, err := yaml.Marshal(reports)
		if err != nil {
			return err
		}
		fmt.Fprint(a.opts.Out, string(b))
	default:
		why.Render(a.opts.Out, reports)
	}
	return nil
}
