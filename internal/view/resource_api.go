package view

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/cluster"
)

// Resource is a resource type as kubectl names it (plural, short names,
// group); commands that act on objects (delete) resolve names through it so
// that aliases and messages are the same as get's.
type Resource struct{ r *cluster.Kind }

// LookupResource resolves "po", "deploy", "deployments.apps", ...
func LookupResource(name string) (Resource, error) {
	r, err := resolveKind(name)
	if err != nil {
		return Resource{}, err
	}
	return Resource{r}, nil
}

// GVK is the resource's kind.
func (r Resource) GVK() schema.GroupVersionKind { return r.r.GVK }

// Select returns the named objects (all when names is empty) in namespace,
// filtered by a label selector; a missing name yields kubectl's NotFound error.
func (r Resource) Select(s *cluster.State, namespace string, names []string, selector string) ([]runtime.Object, error) {
	if !r.r.Namespaced {
		namespace = ""
	}
	sel := labels.Everything()
	if selector != "" {
		var err error
		if sel, err = labels.Parse(selector); err != nil {
			return nil, err
		}
	}
	if len(names) > 0 {
		var out []runtime.Object
		for _, n := range names {
			obj, ok := lookup(s, r.r, namespace, n)
			if !ok {
				return nil, notFound(r.r, n)
			}
			out = append(out, obj)
		}
		return out, nil
	}
	var out []runtime.Object
	for _, obj := range listKind(s, r.r, namespace) {
		m, err := metaAccessor(obj)
		if err == nil && sel.Matches(labels.Set(m.GetLabels())) {
			out = append(out, obj)
		}
	}
	return out, nil
}

// Kind is the resource's entry in the kind registry.
func (r Resource) Kind() *cluster.Kind { return r.r }
