package view

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/berth-sim/berth/internal/cluster"
)

// GetOptions are kubectl get's flags.
type GetOptions struct {
	// Args are the positional arguments: "pods", "pods,nodes", "pod NAME...",
	// "pod/NAME deploy/NAME", "all".
	Args          []string
	Namespace     string // -n; "" means "default"
	AllNamespaces bool   // -A
	LabelSelector string // -l
	FieldSelector string // --field-selector
	// Output is -o: "", "wide", "yaml", "json", "name", "jsonpath=TEMPLATE",
	// "custom-columns=SPEC".
	Output     string
	ShowLabels bool // --show-labels
	// LabelColumns are -L keys shown as extra columns.
	LabelColumns []string
	NoHeaders    bool // --no-headers
	// ErrOut receives what kubectl prints on stderr without failing
	// ("No resources found in ui namespace."); nil discards it.
	ErrOut io.Writer
}

// request is one resource type with either a list or named objects.
type request struct {
	r     *cluster.Kind
	names []string // empty: list
}

// group is what one request found.
type group struct {
	r    *cluster.Kind
	objs []runtime.Object
}

// Get prints objects as kubectl get does. A returned error's text is exactly
// what kubectl prints on stderr (one or more lines); anything printed before
// it (found objects) is already on w.
func Get(w io.Writer, s *cluster.State, opts GetOptions) error {
	errOut := opts.ErrOut
	if errOut == nil {
		errOut = io.Discard
	}
	namespace := opts.Namespace
	if namespace == "" {
		namespace = "default"
	}
	reqs, err := parseArgs(opts.Args)
	if err != nil {
		return err
	}
	labelSel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return fmt.Errorf("error: %v", err)
	}
	fieldSel, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return fmt.Errorf("error: %v", err)
	}

	var groups []group
	var errs []string
	warnDeprecated(errOut, s, reqs)
	for _, rq := range reqs {
		listNS := namespace
		if opts.AllNamespaces || !rq.r.Namespaced {
			listNS = ""
		}
		if len(rq.names) == 0 {
			objs, err := selectObjects(rq.r, listKind(s, rq.r, listNS), labelSel, fieldSel, opts)
			if err != nil {
				return err
			}
			groups = append(groups, group{r: rq.r, objs: objs})
			continue
		}
		g := group{r: rq.r}
		for _, name := range rq.names {
			obj, ok := lookup(s, rq.r, namespace, name)
			if !ok {
				errs = append(errs, notFound(rq.r, name).Error())
				continue
			}
			g.objs = append(g.objs, obj)
		}
		if len(g.objs) > 0 {
			groups = append(groups, g)
		}
	}

	singleItem := len(reqs) == 1 && len(reqs[0].names) == 1
	switch {
	case opts.Output == "" || opts.Output == "wide":
		printTables(w, errOut, s, groups, opts, namespace, len(errs) > 0)
	case strings.HasPrefix(opts.Output, "custom-columns="):
		if err := printCustomColumns(w, groups, strings.TrimPrefix(opts.Output, "custom-columns="), opts.NoHeaders); err != nil {
			return err
		}
	default:
		if err := printGeneric(w, groups, opts.Output, singleItem && len(errs) == 0); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// parseArgs understands "TYPE[,TYPE...] [NAME...]" and "TYPE/NAME...".
func parseArgs(args []string) ([]request, error) {
	if len(args) == 0 {
		return nil, errors.New("You must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources.\n\nerror: Required resource not specified.")
	}
	if strings.Contains(args[0], "/") {
		var reqs []request
		for _, a := range args {
			typ, name, ok := strings.Cut(a, "/")
			if !ok || name == "" {
				return nil, fmt.Errorf("error: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'")
			}
			r, err := resolveKind(typ)
			if err != nil {
				return nil, err
			}
			if n := len(reqs); n > 0 && reqs[n-1].r == r {
				reqs[n-1].names = append(reqs[n-1].names, name)
				continue
			}
			reqs = append(reqs, request{r: r, names: []string{name}})
		}
		return reqs, nil
	}
	var reqs []request
	for _, typ := range strings.Split(args[0], ",") {
		// A category ("all", "karpenter") expands to its kinds, as
		// kubectl's category expander does before resolving resources.
		if members := kinds.InCategory(strings.ToLower(typ)); len(members) > 0 {
			for _, r := range members {
				reqs = append(reqs, request{r: r})
			}
			continue
		}
		r, err := resolveKind(typ)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, request{r: r, names: append([]string(nil), args[1:]...)})
	}
	return reqs, nil
}

// selectObjects applies -l and --field-selector, rejecting fields the API
// server would not accept with its error text.
func selectObjects(r *cluster.Kind, objs []runtime.Object, ls labels.Selector, fs fields.Selector, opts GetOptions) ([]runtime.Object, error) {
	if !fs.Empty() {
		supported := fieldSet(r, r.New())
		for _, req := range fs.Requirements() {
			if _, ok := supported[req.Field]; !ok {
				gvr := r.GVK.GroupVersion().WithResource(r.Resource)
				return nil, fmt.Errorf("Error from server (BadRequest): Unable to find %q that match label selector %q, field selector %q: field label not supported: %s",
					gvr.String(), opts.LabelSelector, opts.FieldSelector, req.Field)
			}
		}
	}
	var out []runtime.Object
	for _, obj := range objs {
		m, err := metaAccessor(obj)
		if err != nil {
			continue
		}
		if !ls.Matches(labels.Set(m.GetLabels())) {
			continue
		}
		if !fs.Empty() && !fs.Matches(fieldSet(r, obj)) {
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}

// printTables reproduces kubectl get's human-readable loop: one table per
// resource type, a blank line between non-empty groups, and the "No
// resources found" notice on errOut when nothing was written.
func printTables(w, errOut io.Writer, s *cluster.State, groups []group, opts GetOptions, namespace string, hadErrors bool) {
	tracking := &trackingWriter{delegate: w}
	separator := &separatorWriter{delegate: tracking}
	tw := printers.GetNewTabWriter(separator)
	withKind := false
	for _, g := range groups[min(1, len(groups)):] {
		if g.r != groups[0].r {
			withKind = true
		}
	}
	allNamespaced := !opts.AllNamespaces
	var printer printers.ResourcePrinter
	var last *cluster.Kind
	for _, g := range groups {
		allNamespaced = allNamespaced && g.r.Namespaced
		if printer == nil || last != g.r {
			tw.Flush()
			tw.SetRememberedWidths(nil)
			if last != nil && !opts.NoHeaders && tracking.written > 0 {
				separator.ready = true
			}
			printer = printers.NewTablePrinter(printers.PrintOptions{
				NoHeaders:     opts.NoHeaders,
				WithNamespace: opts.AllNamespaces && g.r.Namespaced,
				WithKind:      withKind,
				Wide:          opts.Output == "wide",
				ShowLabels:    opts.ShowLabels,
				ColumnLabels:  opts.LabelColumns,
				Kind:          g.r.GVK.GroupKind(),
			})
			last = g.r
		}
		p := printerFor(g.r)
		table := &metav1.Table{ColumnDefinitions: append([]metav1.TableColumnDefinition(nil), p.columns...)}
		for _, obj := range g.objs {
			if p.rows != nil {
				table.Rows = append(table.Rows, p.rows(s, obj)...)
				continue
			}
			table.Rows = append(table.Rows, p.row(s, obj))
		}
		_ = printer.PrintObj(table, tw)
	}
	tw.Flush()
	if tracking.written == 0 && !hadErrors {
		if allNamespaced {
			fmt.Fprintf(errOut, "No resources found in %s namespace.\n", namespace)
		} else {
			fmt.Fprintln(errOut, "No resources found")
		}
	}
}

type trackingWriter struct {
	delegate io.Writer
	written  int
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	t.written += len(p)
	return t.delegate.Write(p)
}

// separatorWriter puts one empty line before the next non-empty write once armed.
type separatorWriter struct {
	delegate io.Writer
	ready    bool
}

func (s *separatorWriter) Write(p []byte) (int, error) {
	if len(p) != 0 && s.ready {
		fmt.Fprintln(s.delegate)
		s.ready = false
	}
	return s.delegate.Write(p)
}

// printGeneric handles -o yaml|json|name|jsonpath: one object when a single
// name was asked for, otherwise a v1 List with an empty resourceVersion.
func printGeneric(w io.Writer, groups []group, output string, singleItem bool) error {
	printer, err := genericPrinter(output)
	if err != nil {
		return err
	}
	var items []unstructured.Unstructured
	for _, g := range groups {
		for _, obj := range g.objs {
			u, err := toUnstructured(g.r, obj)
			if err != nil {
				return err
			}
			items = append(items, *u)
		}
	}
	if singleItem && len(items) == 1 {
		return printer.PrintObj(&items[0], w)
	}
	list := &unstructured.UnstructuredList{Object: map[string]interface{}{
		"kind":       "List",
		"apiVersion": "v1",
		"metadata":   map[string]interface{}{"resourceVersion": ""},
	}}
	list.Items = items
	if list.Items == nil {
		list.Items = []unstructured.Unstructured{}
	}
	return printer.PrintObj(list, w)
}

func genericPrinter(output string) (printers.ResourcePrinter, error) {
	switch {
	case output == "yaml":
		return &printers.YAMLPrinter{}, nil
	case output == "json":
		return &printers.JSONPrinter{}, nil
	case output == "name":
		return &printers.NamePrinter{}, nil
	case strings.HasPrefix(output, "jsonpath="):
		p, err := printers.NewJSONPathPrinter(strings.TrimPrefix(output, "jsonpath="))
		if err != nil {
			return nil, fmt.Errorf("error: error parsing jsonpath %s, %v", strings.TrimPrefix(output, "jsonpath="), err)
		}
		p.AllowMissingKeys(true)
		return p, nil
	}
	return nil, fmt.Errorf("error: unable to match a printer suitable for the output format %q, allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,wide,yaml", output)
}

// toUnstructured renders an object as the API server would serve it: kind and
// apiVersion set, managed fields hidden (kubectl's default).
func toUnstructured(r *cluster.Kind, obj runtime.Object) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	content := map[string]interface{}{}
	if err := json.Unmarshal(data, &content); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(r.GVK)
	u.SetManagedFields(nil)
	return u, nil
}
