package view

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"

	"github.com/berth-sim/berth/internal/cluster"
)

// Kinds without a built-in printer (custom resources) print the way the API
// server and kubectl print any CRD: get from the kind's printer columns,
// describe with kubectl's generic describer.

// defaultPrinterColumns is what the API server defaults a CRD's
// additionalPrinterColumns to.
var defaultPrinterColumns = []cluster.PrinterColumn{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}

// customResourcePrinter is the API server's CRD table convertor: a Name
// column, then one column per printer column.
func customResourcePrinter(k *cluster.Kind) builtin {
	specs := k.PrinterColumns
	if len(specs) == 0 {
		specs = defaultPrinterColumns
	}
	columns := []metav1.TableColumnDefinition{nameCol()}
	paths := make([]*jsonpath.JSONPath, len(specs))
	for i, c := range specs {
		columns = append(columns, metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Priority: c.Priority, Description: c.Description})
		p := jsonpath.New(c.Name).AllowMissingKeys(true)
		if err := p.Parse("{" + c.JSONPath + "}"); err != nil {
			// The API server rejects such a CRD; a kind entry with one is a bug.
			panic(fmt.Sprintf("view: %s printer column %q: %v", k.GVK.Kind, c.Name, err))
		}
		paths[i] = p
	}
	row := func(s *cluster.State, obj runtime.Object) metav1.TableRow {
		content, err := objectContent(k.GVK, obj)
		m, _ := metaAccessor(obj)
		cells := []interface{}{m.GetName()}
		for i, p := range paths {
			cells = append(cells, columnCell(s, p, specs[i].Type, content, err))
		}
		return row(obj, cells...)
	}
	return builtin{columns: columns, row: row}
}

// columnCell follows the CRD table convertor: a missing value is an empty
// cell, strings print through the JSONPath printer, other types are typed.
func columnCell(s *cluster.State, p *jsonpath.JSONPath, typ string, content map[string]interface{}, contentErr error) interface{} {
	if contentErr != nil {
		return nil
	}
	results, err := p.FindResults(content)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	value := results[0][0].Interface()
	if typ == "string" {
		var buf bytes.Buffer
		if err := p.PrintResults(&buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
			return nil
		}
		return buf.String()
	}
	switch v := value.(type) {
	case int64:
		switch typ {
		case "integer":
			return v
		case "number":
			return float64(v)
		}
	case float64:
		switch typ {
		case "integer":
			return int64(v)
		case "number":
			return v
		}
	case bool:
		if typ == "boolean" {
			return v
		}
	case string:
		if typ == "date" {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(v); err != nil {
				return "<invalid>"
			}
			return since(s, t)
		}
	}
	return nil
}

// objectContent is obj as the API server serves it to a dynamic client:
// unstructured, with apiVersion and kind.
func objectContent(gvk schema.GroupVersionKind, obj runtime.Object) (map[string]interface{}, error) {
	var content map[string]interface{}
	if u, ok := obj.(runtime.Unstructured); ok {
		content = map[string]interface{}{}
		for k, v := range u.UnstructuredContent() {
			content[k] = v
		}
	} else {
		var err error
		if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
	}
	content["apiVersion"], content["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return content, nil
}

// genericDescriber is kubectl's genericDescriber: name, namespace, labels
// and annotations, then every other field as nested "Field Name: value"
// lines, then the object's events.
func genericDescriber(gvk schema.GroupVersionKind) describeFunc {
	return genericDescriberWith(gvk, nil)
}

// genericDescriberWith is genericDescriber with berth's own sections
// (extra) written just before the events.
func genericDescriberWith(gvk schema.GroupVersionKind, extra func(s *cluster.State, obj runtime.Object, w prefixWriter)) describeFunc {
	return func(s *cluster.State, obj runtime.Object) string {
		m, _ := metaAccessor(obj)
		content, err := objectContent(gvk, obj)
		if err != nil {
			return fmt.Sprintf("error: %v\n", err)
		}
		events := eventQuery{kind: gvk.Kind, namespace: m.GetNamespace(), name: m.GetName(), uids: uidsOf(m)}.find(s)
		return tabbedString(func(w prefixWriter) {
			w.write(level0, "Name:\t%s\n", m.GetName())
			w.write(level0, "Namespace:\t%s\n", m.GetNamespace())
			printLabelsMultiline(w, "Labels", m.GetLabels())
			printAnnotationsMultiline(w, "Annotations", m.GetAnnotations())
			printUnstructuredContent(w, level0, content, "", ".metadata.managedFields", ".metadata.name",
				".metadata.namespace", ".metadata.labels", ".metadata.annotations")
			if extra != nil {
				extra(s, obj, w)
			}
			describeEvents(s, events, w)
		})
	}
}

// printUnstructuredContent prints fields sorted by name; maps nest one
// level deeper, list items of maps are printed at the next level.
func printUnstructuredContent(w prefixWriter, level int, content map[string]interface{}, skipPrefix string, skip ...string) {
	fields := make([]string, 0, len(content))
	for f := range content {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, field := range fields {
		path := skipPrefix + "." + field
		if containsString(skip, path) {
			continue
		}
		switch v := content[field].(type) {
		case map[string]interface{}:
			w.write(level, "%s:\n", smartLabelFor(field))
			printUnstructuredContent(w, level+1, v, path, skip...)
		case []interface{}:
			w.write(level, "%s:\n", smartLabelFor(field))
			for _, child := range v {
				if c, ok := child.(map[string]interface{}); ok {
					printUnstructuredContent(w, level+1, c, path, skip...)
				} else {
					w.write(level+1, "%v\n", child)
				}
			}
		default:
			w.write(level, "%s:\t%v\n", smartLabelFor(field), v)
		}
	}
}

// smartLabelFor turns "apiVersion" into "API Version"; fields with
// characters other than letters and '-' print as they are.
func smartLabelFor(field string) string {
	if strings.IndexFunc(field, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) != -1 {
		return field
	}
	var parts []string
	for _, part := range splitCamelCase(field) {
		switch up := strings.ToUpper(part); up {
		case "API", "URL", "UID", "OSB", "GUID":
			part = up
		default:
			r := []rune(part)
			r[0] = unicode.ToTitle(r[0])
			part = string(r)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " ")
}

// splitCamelCase splits runs of lower-case, upper-case and other runes, then
// gives an upper-case run's last rune to a following lower-case run, so
// "APIVersion" is "API", "Version".
func splitCamelCase(s string) []string {
	class := func(r rune) int {
		switch {
		case unicode.IsLower(r):
			return 1
		case unicode.IsUpper(r):
			return 2
		case unicode.IsDigit(r):
			return 3
		}
		return 4
	}
	var runs [][]rune
	last := 0
	for _, r := range s {
		if c := class(r); c == last && len(runs) > 0 {
			runs[len(runs)-1] = append(runs[len(runs)-1], r)
		} else {
			runs = append(runs, []rune{r})
			last = c
		}
	}
	for i := 0; i+1 < len(runs); i++ {
		if len(runs[i]) > 0 && unicode.IsUpper(runs[i][0]) && unicode.IsLower(runs[i+1][0]) {
			runs[i+1] = append([]rune{runs[i][len(runs[i])-1]}, runs[i+1]...)
			runs[i] = runs[i][:len(runs[i])-1]
		}
	}
	var out []string
	for _, r := range runs {
		if len(r) > 0 {
			out = append(out, string(r))
		}
	}
	return out
}
