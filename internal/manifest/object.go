// Package manifest turns what a user hands to `berth apply` (files,
// directories, stdin, Kustomize directories) into typed Kubernetes objects,
// each remembering where it came from, and validates them with the same
// rules and messages the API server uses.
//
// Unknown fields are rejected (kubectl's default --validate=strict behaviour
// on a current API server), and so are kinds berth does not model: nothing is
// ever dropped silently.
package manifest

import (
	"fmt"
	"github.com/berth-sim/berth/internal/cluster"
	"sort"
	"strconv"
	"unicode"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/eksctl"
)

// Object is one decoded manifest object.
type Object struct {
	// Object is the typed object: a k8s.io/api type such as *corev1.Pod, or
	// *eksctl.ClusterConfig.
	Object runtime.Object
	GVK    schema.GroupVersionKind
	Source Source
	// Raw is the document's JSON as written (kubectl records it as the
	// last-applied configuration).
	Raw []byte
	// Canonical says Raw is encoding/json's rendering of the decoded
	// document (keys sorted, compact), as for every YAML document and List
	// item; Raw of a JSON document is the text as written.
	Canonical bool
}

// Source says where an object was read from.
type Source struct {
	// File is the path as given, "STDIN" for -, or the Kustomize directory.
	File string
	// Document is the 1-based index of the document in the file, counting
	// only non-empty documents.
	Document int
	// Line is the 1-based line in the file where the document's content starts.
	Line int
	// Item is the 1-based index inside a List document, 0 otherwise.
	Item int
}

// String renders "file:line: document n" (with " item m" inside a List).
func (s Source) String() string {
	out := s.File
	if s.Line > 0 {
		out += fmt.Sprintf(":%d", s.Line)
	}
	out += fmt.Sprintf(": document %d", s.Document)
	if s.Item > 0 {
		out += fmt.Sprintf(" item %d", s.Item)
	}
	return out
}

// Kind returns the object's kind.
func (o Object) Kind() string { return o.GVK.Kind }

// Name returns metadata.name (for a ClusterConfig, the cluster name).
func (o Object) Name() string {
	if cfg, ok := o.Object.(*eksctl.ClusterConfig); ok {
		return cfg.Metadata.Name
	}
	if m, err := meta.Accessor(o.Object); err == nil {
		return m.GetName()
	}
	return ""
}

// Namespace returns metadata.namespace as written (empty when omitted).
func (o Object) Namespace() string {
	if m, err := meta.Accessor(o.Object); err == nil {
		return m.GetNamespace()
	}
	return ""
}

// Namespaced reports whether the object's kind lives in a namespace.
func (o Object) Namespaced() bool {
	k, ok := kindsByGVK[o.GVK]
	return ok && k.namespaced
}

// describe renders "(Kind ns/name)", "(Kind name)" or "(Kind)" for errors.
func (o Object) describe() string {
	ns := ""
	if o.Namespaced() {
		ns = o.Namespace()
	}
	return objectLabel(o.GVK.Kind, ns, o.Name())
}

func objectLabel(kind, namespace, name string) string {
	kind, namespace, name = printable(kind), printable(namespace), printable(name)
	switch {
	case name == "":
		return "(" + kind + ")"
	case namespace != "":
		return fmt.Sprintf("(%s %s/%s)", kind, namespace, name)
	default:
		return fmt.Sprintf("(%s %s)", kind, name)
	}
}

// printable quotes a user-supplied string that would break the one-line
// error format (control characters) and leaves ordinary ones alone.
func printable(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Error is a problem with one document or object. Its text is one line:
// "file:line: document n (Kind ns/name): detail".
type Error struct {
	Source Source
	// Object is "(Kind ns/name)" when the object got far enough to be named.
	Object string
	Err    error
}

func (e *Error) Error() string {
	if e.Object != "" {
		return fmt.Sprintf("%s %s: %v", e.Source, e.Object, oneLine(e.Err))
	}
	return fmt.Sprintf("%s: %v", e.Source, oneLine(e.Err))
}

func (e *Error) Unwrap() error { return e.Err }

// kind describes one modelled kind.
type kind struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	// newObject returns an empty typed object for the Kubernetes decoder; nil
	// for kinds with their own decoder (ClusterConfig).
	newObject func() runtime.Object
}

// kinds is every kind berth models: the stored kinds apply accepts
// (cluster.Kinds marks them modelled) and the eksctl ClusterConfig.
var kinds = func() []kind {
	var out []kind
	for _, k := range cluster.Kinds {
		if k.Modelled {
			out = append(out, kind{k.GVK, k.Namespaced, k.New})
		}
	}
	return append(out, kind{eksctl.GroupVersionKind, false, nil})
}()

var kindsByGVK = func() map[schema.GroupVersionKind]kind {
	m := map[schema.GroupVersionKind]kind{}
	for _, k := range kinds {
		m[k.gvk] = k
	}
	return m
}()

// SupportedKinds lists the kinds berth models, sorted by group, version, kind.
func SupportedKinds() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.gvk)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	return out
}
