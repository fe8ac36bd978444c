// Package describe is the differential test of `berth describe` against
// kubectl's own describers (k8s.io/kubectl/pkg/describe): berth's objects are
// served to kubectl's real clients by a small in-memory API server, each
// object is described by both, and the outputs must be byte-identical.
package describe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// apiServer answers the read requests kubectl's describers make (GET one
// object, LIST with label and field selectors) from a fixed set of objects.
// It is an http.RoundTripper, so kubectl's clients talk to it without a
// network. Lists are ordered by "namespace/name", as etcd's keys order them.
type apiServer struct {
	// objects by resource, each list in key order.
	objects map[schema.GroupVersionResource][]*unstructured.Unstructured
	// kinds maps a resource to the Kind its list carries.
	kinds map[schema.GroupVersionResource]string
	// raw is each object's JSON, encoded once.
	raw map[*unstructured.Unstructured]json.RawMessage
	// byInvolved indexes events by involvedObject.name, the one field every
	// describer's event search sets.
	byInvolved map[string][]*unstructured.Unstructured
}

var eventsResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}

func newAPIServer() *apiServer {
	return &apiServer{objects: map[schema.GroupVersionResource][]*unstructured.Unstructured{},
		kinds: map[schema.GroupVersionResource]string{}, raw: map[*unstructured.Unstructured]json.RawMessage{}}
}

// add stores obj (already carrying apiVersion and kind) under gvr.
func (a *apiServer) add(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	a.raw[obj] = data
	a.objects[gvr] = append(a.objects[gvr], obj)
	a.kinds[gvr] = obj.GetKind()
	return nil
}

// sort orders every list by key once all objects are in, and indexes the
// events.
func (a *apiServer) sort() {
	for _, list := range a.objects {
		sort.SliceStable(list, func(i, j int) bool { return objectKey(list[i]) < objectKey(list[j]) })
	}
	a.byInvolved = map[string][]*unstructured.Unstructured{}
	for _, e := range a.objects[eventsResource] {
		name, _, _ := unstructured.NestedString(e.Object, "involvedObject", "name")
		a.byInvolved[name] = append(a.byInvolved[name], e)
	}
}

// candidates are the objects a list may return: for events searched by
// involved object name, only that object's (in list order).
func (a *apiServer) candidates(gvr schema.GroupVersionResource, fs fields.Selector) []*unstructured.Unstructured {
	if gvr == eventsResource {
		if name, ok := fs.RequiresExactMatch("involvedObject.name"); ok {
			return a.byInvolved[name]
		}
	}
	return a.objects[gvr]
}

func objectKey(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// request is a parsed resource path: /api/v1/... or /apis/GROUP/VERSION/...,
// then optionally namespaces/NS, the resource, and optionally a name.
type request struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

func parsePath(path string) (request, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var r request
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		r.gvr.Version, parts = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		r.gvr.Group, r.gvr.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return r, fmt.Errorf("unexpected path %q", path)
	}
	// namespaces/NS/RESOURCE[/NAME] is a namespaced request; namespaces or
	// namespaces/NAME alone is the Namespace resource itself.
	if len(parts) >= 3 && parts[0] == "namespaces" {
		r.namespace, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		r.gvr.Resource = parts[0]
	case 2:
		r.gvr.Resource, r.name = parts[0], parts[1]
	default:
		return r, fmt.Errorf("unexpected path %q", path)
	}
	return r, nil
}

// RoundTrip serves one request.
func (a *apiServer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return a.status(req, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "read-only"), nil
	}
	r, err := parsePath(req.URL.Path)
	if err != nil {
		return a.status(req, http.StatusNotFound, metav1.StatusReasonNotFound, err.Error()), nil
	}
	if r.name != "" {
		for _, o := range a.objects[r.gvr] {
			if o.GetName() == r.name && o.GetNamespace() == r.namespace {
				return respond(req, http.StatusOK, a.raw[o])
			}
		}
		return a.status(req, http.StatusNotFound, metav1.StatusReasonNotFound,
			fmt.Sprintf("%s %q not found", r.gvr.GroupResource(), r.name)), nil
	}
	q := req.URL.Query()
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return a.status(req, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error()), nil
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return a.status(req, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error()), nil
	}
	items := []json.RawMessage{}
	for _, o := range a.candidates(r.gvr, fs) {
		if r.namespace != "" && o.GetNamespace() != r.namespace {
			continue
		}
		if !ls.Matches(labels.Set(o.GetLabels())) || !fs.Matches(fieldSet(o, fs)) {
			continue
		}
		items = append(items, a.raw[o])
	}
	kind := a.kinds[r.gvr]
	if kind == "" {
		// An empty list of a kind berth does not keep (ResourceQuota,
		// LimitRange): the kind name follows the resource's.
		kind = listKindGuess(r.gvr.Resource)
	}
	return respond(req, http.StatusOK, map[string]any{
		"apiVersion": r.gvr.GroupVersion().String(),
		"kind":       kind + "List",
		"metadata":   map[string]any{"resourceVersion": "1"},
		"items":      items,
	})
}

// fieldSet holds the values of the fields sel names, read from the object
// by path: the API server's field labels used by kubectl (spec.nodeName,
// status.phase, involvedObject.*, metadata.*) are the objects' JSON paths.
func fieldSet(o *unstructured.Unstructured, sel fields.Selector) fields.Set {
	set := fields.Set{}
	for _, req := range sel.Requirements() {
		v, found, _ := unstructured.NestedFieldNoCopy(o.Object, strings.Split(req.Field, ".")...)
		if found && v != nil {
			set[req.Field] = fmt.Sprint(v)
		} else {
			set[req.Field] = ""
		}
	}
	return set
}

var knownListKinds = map[string]string{
	"resourcequotas": "ResourceQuota", "limitranges": "LimitRange", "events": "Event",
	"pods": "Pod", "replicasets": "ReplicaSet", "endpointslices": "EndpointSlice",
	"persistentvolumeclaims": "PersistentVolumeClaim", "leases": "Lease",
}

func listKindGuess(resource string) string {
	if k, ok := knownListKinds[resource]; ok {
		return k
	}
	return "Unknown"
}

func (a *apiServer) status(req *http.Request, code int, reason metav1.StatusReason, msg string) *http.Response {
	resp, _ := respond(req, code, map[string]any{
		"apiVersion": "v1", "kind": "Status", "status": metav1.StatusFailure,
		"message": msg, "reason": string(reason), "code": code,
	})
	return resp
}

func respond(req *http.Request, code int, body any) (*http.Response, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: code,
		Status:     http.StatusText(code),
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(data)),
		Request:    req,
	}, nil
}
