package describe

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	kubectl "k8s.io/kubectl/pkg/describe"

	"github.com/berth-sim/berth/internal/cluster"
	"github.com/berth-sim/berth/internal/view"
)

// Result is one object described by both sides.
type Result struct {
	// Kind is the object's group and kind ("Deployment.apps").
	Kind string
	// Key is "namespace/name" or "name".
	Key string
	// Berth is `berth describe KIND NAME`'s output; Kubectl is what
	// kubectl's describer printed for the same object, or its error.
	Berth, Kubectl string
}

// Same reports whether both outputs are byte-identical.
func (r Result) Same() bool { return r.Berth == r.Kubectl }

// notCompared are the kinds berth describes that have no kubectl
// counterpart: EKS API objects berth serves under its own group
// (docs/fargate.md, docs/cluster-autoscaler.md), described as eksctl
// shows them.
var notCompared = map[string]string{
	"FargateProfile.eks.berth.dev": "an EKS API object (eksctl get/describe), not a Kubernetes resource",
	"NodeGroup.eks.berth.dev":      "an EKS API object (eksctl get nodegroup), not a Kubernetes resource",
}

// Compare describes every object of s with kubectl's describer for its kind
// (the generic one where kubectl has none, as for custom resources) and with
// berth's. kubectl's describers read the wall clock (ages, "Terminating
// (lasts ...)"), so the caller runs Compare where time.Now is s.Now (a
// testing/synctest bubble advanced to it).
//
// skip, when set, leaves out objects the caller has already compared in an
// identical form (the test skips events seen at the same resourceVersion:
// the generic describer prints nothing that depends on the clock).
func Compare(s *cluster.State, skip func(kind string, obj *unstructured.Unstructured) bool) ([]Result, error) {
	srv := newAPIServer()
	kinds := cluster.ServedKinds()
	for _, k := range kinds {
		gvr := k.GVK.GroupVersion().WithResource(k.Resource)
		for _, obj := range k.List(s) {
			u, err := toUnstructured(k, obj)
			if err != nil {
				return nil, err
			}
			if err := srv.add(gvr, u); err != nil {
				return nil, err
			}
		}
	}
	srv.sort()
	cfg := &rest.Config{Host: "http://berth.invalid", Transport: srv, QPS: -1}
	settings := kubectl.DescriberSettings{ShowEvents: true, ChunkSize: 500}
	var out []Result
	for _, k := range kinds {
		name := k.GVK.GroupKind().String()
		if _, skip := notCompared[name]; skip {
			continue
		}
		gvr := k.GVK.GroupVersion().WithResource(k.Resource)
		objs := srv.objects[gvr]
		if len(objs) == 0 {
			continue
		}
		d, ok := kubectl.DescriberFor(k.GVK.GroupKind(), cfg)
		if !ok {
			scope := meta.RESTScopeRoot
			if k.Namespaced {
				scope = meta.RESTScopeNamespace
			}
			d, ok = kubectl.GenericDescriberFor(&meta.RESTMapping{Resource: gvr, GroupVersionKind: k.GVK, Scope: scope}, cfg)
			if !ok {
				return nil, fmt.Errorf("no kubectl describer for %s", name)
			}
		}
		resource := k.Resource
		if k.GVK.Group != "" {
			resource += "." + k.GVK.Group
		}
		for _, o := range objs {
			if skip != nil && skip(name, o) {
				continue
			}
			r := Result{Kind: name, Key: objectKey(o)}
			text, err := d.Describe(o.GetNamespace(), o.GetName(), settings)
			if err != nil {
				text = "error: " + err.Error()
			}
			r.Kubectl = text
			var buf bytes.Buffer
			ns := o.GetNamespace()
			if err := view.Describe(&buf, s, resource, ns, []string{o.GetName()}, ""); err != nil {
				fmt.Fprintf(&buf, "error: %v", err)
			}
			r.Berth = buf.String()
			out = append(out, r)
		}
	}
	return out, nil
}

// toUnstructured is obj as the API server serves it: its JSON with
// apiVersion and kind.
func toUnstructured(k *cluster.Kind, obj runtime.Object) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		return nil, err
	}
	u.SetAPIVersion(k.GVK.GroupVersion().String())
	u.SetKind(k.GVK.Kind)
	return u, nil
}
