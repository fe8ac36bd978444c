package view

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/berth-sim/berth/internal/cluster"
)

// Nesting levels; each indents two spaces, as kubectl's PrefixWriter.
const (
	level0 = iota
	level1
	level2
	level3
	level4
)

// maxAnnotationLen is where kubectl folds a long annotation onto its own lines.
const maxAnnotationLen = 140

// lastAppliedAnnotation is never shown by describe.
const lastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// prefixWriter writes text at an indentation level into a tabwriter, so
// that "Label:\tvalue" cells align per contiguous block exactly as kubectl's
// describe output does.
type prefixWriter struct{ out io.Writer }

func (pw prefixWriter) write(level int, format string, a ...interface{}) {
	_ = printers.WriteEscaped(pw.out, strings.Repeat("  ", level)+fmt.Sprintf(format, a...))
}

func (pw prefixWriter) writeLine(a ...interface{}) {
	_ = printers.WriteEscaped(pw.out, fmt.Sprintln(a...))
}

// tabbedString runs f against kubectl's describe tabwriter settings
// (minwidth 0, tabwidth 8, padding 2, padchar ' ').
func tabbedString(f func(w prefixWriter)) string {
	buf := &bytes.Buffer{}
	tw := tabwriter.NewWriter(buf, 0, 8, 2, ' ', 0)
	f(prefixWriter{out: tw})
	tw.Flush()
	return buf.String()
}

// NoResourcesFound is returned when a selector matched nothing; kubectl
// prints its text on stderr and still exits 0.
type NoResourcesFound struct{ Namespace string }

func (e *NoResourcesFound) Error() string {
	if e.Namespace == "" {
		return "No resources found"
	}
	return fmt.Sprintf("No resources found in %s namespace.", e.Namespace)
}

// Describe prints kubectl describe output for kind (any served resource
// name or alias; kinds without a describer of their own get kubectl's
// generic one) by names or by label selector. Objects are separated by two blank lines as kubectl does. A
// missing name yields kubectl's NotFound text as the error (after the found
// objects are printed); an empty selection yields *NoResourcesFound.
func Describe(w io.Writer, s *cluster.State, kind, namespace string, names []string, selector string) error {
	if namespace == "" {
		namespace = "default"
	}
	r, err := resolveKind(kind)
	if err != nil {
		return err
	}
	describe := printerFor(r).describe
	var objs []runtime.Object
	var errs []string
	if len(names) > 0 {
		for _, name := range names {
			obj, found := lookup(s, r, namespace, name)
			if !found {
				errs = append(errs, notFound(r, name).Error())
				continue
			}
			objs = append(objs, obj)
		}
	} else {
		sel, err := labels.Parse(selector)
		if err != nil {
			return fmt.Errorf("error: %v", err)
		}
		listNS := namespace
		if !r.Namespaced {
			listNS = ""
		}
		for _, obj := range listKind(s, r, listNS) {
			if m, err := metaAccessor(obj); err == nil && sel.Matches(labels.Set(m.GetLabels())) {
				objs = append(objs, obj)
			}
		}
	}
	for i, obj := range objs {
		if i > 0 {
			fmt.Fprint(w, "\n\n")
		}
		fmt.Fprint(w, describe(s, obj))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	if len(objs) == 0 {
		if !r.Namespaced {
			return &NoResourcesFound{}
		}
		return &NoResourcesFound{Namespace: namespace}
	}
	return nil
}

// printLabelsMultiline prints "Title:\tk=v" lines, keys sorted, "<none>" when empty.
func printLabelsMultiline(w prefixWriter, title string, m map[string]string) {
	printLabelsMultilineWithIndent(w, "", title, "\t", m)
}

func printLabelsMultilineWithIndent(w prefixWriter, initialIndent, title, innerIndent string, m map[string]string) {
	w.write(level0, "%s%s:%s", initialIndent, title, innerIndent)
	if len(m) == 0 {
		w.writeLine("<none>")
		return
	}
	keys := sortedMapKeys(m)
	for i, k := range keys {
		if i != 0 {
			w.write(level0, "%s", initialIndent)
			w.write(level0, "%s", innerIndent)
		}
		w.write(level0, "%s=%s\n", k, m[k])
	}
}

func sortedMapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// printAnnotationsMultiline is kubectl's annotation block: last-applied
// configuration hidden, long or multi-line values folded below the key.
func printAnnotationsMultiline(w prefixWriter, title string, annotations map[string]string) {
	w.write(level0, "%s:\t", title)
	var keys []string
	for k := range annotations {
		if k != lastAppliedAnnotation {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		w.writeLine("<none>")
		return
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i != 0 {
			w.write(level0, "\t")
		}
		value := strings.TrimSuffix(annotations[k], "\n")
		if len(value)+len(k)+2 > maxAnnotationLen || strings.Contains(value, "\n") {
			w.write(level0, "%s:\n", k)
			for _, line := range strings.Split(value, "\n") {
				if len(line) > maxAnnotationLen-2 {
					line = line[:maxAnnotationLen-2] + "..."
				}
				w.write(level0, "\t  %s\n", line)
			}
		} else {
			w.write(level0, "%s: %s\n", k, value)
		}
	}
}

// printTolerationsMultiline formats tolerations as kubectl: sorted by key,
// "key[=value][:effect][ op=Exists][ for Ns]".
func printTolerationsMultiline(w prefixWriter, title string, tolerations []corev1.Toleration) {
	w.write(level0, "%s:\t", title)
	if len(tolerations) == 0 {
		w.writeLine("<none>")
		return
	}
	sorted := append([]corev1.Toleration(nil), tolerations...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	for i, t := range sorted {
		if i != 0 {
			w.write(level0, "\t")
		}
		w.write(level0, "%s", t.Key)
		if t.Value != "" {
			w.write(level0, "=%s", t.Value)
		}
		if t.Effect != "" {
			w.write(level0, ":%s", t.Effect)
		}
		if t.Operator == corev1.TolerationOpExists && t.Value == "" {
			if t.Key != "" || t.Effect != "" {
				w.write(level0, " op=Exists")
			} else {
				w.write(level0, "op=Exists")
			}
		}
		if t.TolerationSeconds != nil {
			w.write(level0, " for %ds", *t.TolerationSeconds)
		}
		w.write(level0, "\n")
	}
}

// printTaintsMultiline sorts taints by "effect,key" and prints Taint.ToString().
func printTaintsMultiline(w prefixWriter, title string, taints []corev1.Taint) {
	w.write(level0, "%s:\t", title)
	if len(taints) == 0 {
		w.writeLine("<none>")
		return
	}
	sorted := append([]corev1.Taint(nil), taints...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return string(sorted[i].Effect)+","+sorted[i].Key < string(sorted[j].Effect)+","+sorted[j].Key
	})
	for i, t := range sorted {
		if i != 0 {
			w.write(level0, "\t")
		}
		w.write(level0, "%s\n", t.ToString())
	}
}

// describeEvents prints the Events table (or "Events:\t<none>").
func describeEvents(s *cluster.State, events []*corev1.Event, w prefixWriter) {
	if len(events) == 0 {
		w.write(level0, "Events:\t<none>\n")
		return
	}
	sorted := append([]*corev1.Event(nil), events...)
	sortEventsForDescribe(sorted)
	w.write(level0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
	w.write(level1, "----\t------\t----\t----\t-------\n")
	for _, e := range sorted {
		source := e.Source.Component
		if source == "" {
			source = e.ReportingController
		}
		message := strings.TrimSpace(e.Message)
		if e.InvolvedObject.FieldPath != "" {
			message = e.InvolvedObject.FieldPath + ": " + message
		}
		w.write(level1, "%v\t%v\t%s\t%v\t%v\n", e.Type, e.Reason, eventLastSeen(s, e), source, message)
	}
}

func printController(m metav1.Object) string {
	if ref := metav1.GetControllerOf(m); ref != nil {
		return ref.Kind + "/" + ref.Name
	}
	return ""
}

func uidsOf(m metav1.Object) []string {
	if m.GetUID() == "" {
		return nil
	}
	return []string{string(m.GetUID())}
}
