package view

import (
	"fmt"
	"io"
	"reflect"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// printCustomColumns implements -o custom-columns=HEADER:.path,... as kubectl
// does: relaxed JSONPath per column, "<none>" for a missing value, values of
// a multi-result path joined by commas.
func printCustomColumns(w io.Writer, groups []group, spec string, noHeaders bool) error {
	type column struct {
		header string
		parser *jsonpath.JSONPath
	}
	var cols []column
	for _, part := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		if !ok {
			return fmt.Errorf("error: unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", part)
		}
		expr, err := relaxedJSONPath(path)
		if err != nil {
			return err
		}
		p := jsonpath.New(header).AllowMissingKeys(true)
		if err := p.Parse(expr); err != nil {
			return fmt.Errorf("error: %v", err)
		}
		cols = append(cols, column{header: header, parser: p})
	}
	tw := printers.GetNewTabWriter(w)
	defer tw.Flush()
	if !noHeaders {
		headers := make([]string, len(cols))
		for i, c := range cols {
			headers[i] = c.header
		}
		fmt.Fprintln(tw, strings.Join(headers, "\t"))
	}
	for _, g := range groups {
		for _, obj := range g.objs {
			u, err := toUnstructured(g.r, obj)
			if err != nil {
				return err
			}
			cells := make([]string, len(cols))
			for i, c := range cols {
				results, err := c.parser.FindResults(u.Object)
				if err != nil {
					return err
				}
				var values []string
				for _, set := range results {
					for _, v := range set {
						values = append(values, fmt.Sprint(printableValue(v)))
					}
				}
				cells[i] = strings.Join(values, ",")
				if len(values) == 0 {
					cells[i] = "<none>"
				}
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
	}
	return nil
}

func printableValue(v reflect.Value) interface{} {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "<none>"
		}
		v = v.Elem()
	}
	return v.Interface()
}

// relaxedJSONPath accepts ".a.b", "a.b" and "{.a.b}" as kubectl does.
func relaxedJSONPath(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("error: jsonpath expression cannot be empty")
	}
	if strings.HasPrefix(path, "{") && strings.HasSuffix(path, "}") {
		path = path[1 : len(path)-1]
	}
	if !strings.HasPrefix(path, ".") {
		path = "." + path
	}
	return "{" + path + "}", nil
}
