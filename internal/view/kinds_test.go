package view

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/cluster"
)

// Every kind apply accepts can be read back with get and describe, through
// its built-in printer or the generic one.
func TestEveryModelledKindIsGettableAndDescribable(t *testing.T) {
	served := append([]*cluster.Kind{cluster.EventKind}, cluster.Kinds...)
	for _, k := range served {
		if !k.Modelled && k != cluster.EventKind {
			continue
		}
		t.Run(k.GVK.Kind, func(t *testing.T) {
			s := cluster.New("", 1)
			obj := k.New()
			m := obj.(metav1.Object)
			m.SetName("probe")
			m.SetCreationTimestamp(metav1.NewTime(s.Now.Add(-time.Minute)))
			if k.Namespaced {
				m.SetNamespace("default")
			}
			k.Put(s, cluster.Key(m.GetNamespace(), "probe"), obj)

			var out bytes.Buffer
			if err := Get(&out, s, GetOptions{Args: []string{k.Resource, "probe"}}); err != nil {
				t.Fatalf("get %s probe: %v", k.Resource, err)
			}
			// Event rows show the involved object, not the event's name.
			if lines := strings.Split(out.String(), "\n"); len(lines) != 3 || (k != cluster.EventKind && !strings.HasPrefix(lines[1], "probe")) {
				t.Errorf("get %s probe:\n%s", k.Resource, out.String())
			}
			out.Reset()
			if err := Describe(&out, s, k.SingularName(), "default", []string{"probe"}, ""); err != nil {
				t.Fatalf("describe %s probe: %v", k.SingularName(), err)
			}
			if !strings.HasPrefix(out.String(), "Name:") || !strings.Contains(out.String(), "probe") {
				t.Errorf("describe %s probe:\n%s", k.SingularName(), out.String())
			}
		})
	}
}

// serveKinds makes get and describe serve extra kinds for one test.
func serveKinds(t *testing.T, extra ...*cluster.Kind) {
	t.Helper()
	old := kinds
	kinds = append(append(cluster.KindList(nil), old...), extra...)
	t.Cleanup(func() { kinds = old })
}

// widgets is a CRD-like kind that exists only in this test: cluster-scoped,
// stored unstructured, with printer columns as a CRD declares them.
func widgetKind(store *map[string]*unstructured.Unstructured) *cluster.Kind {
	return cluster.NewKind(cluster.Kind{
		GVK:        schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
		Resource:   "widgets",
		ShortNames: []string{"wd"},
		PrinterColumns: []cluster.PrinterColumn{
			{Name: "Class", Type: "string", JSONPath: ".spec.classRef.name"},
			{Name: "Nodes", Type: "integer", JSONPath: ".status.nodes"},
			{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
			{Name: "Weight", Type: "integer", JSONPath: ".spec.weight", Priority: 1},
		},
	}, func(*cluster.State) *map[string]*unstructured.Unstructured { return store })
}

func widget(s *cluster.State, name string, nodes int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]interface{}{
			"name": name, "uid": "uid-" + name,
			"creationTimestamp": s.Now.Add(-5 * time.Minute).UTC().Format(time.RFC3339),
			"labels":            map[string]interface{}{"team": "infra"},
			"annotations":       map[string]interface{}{"note": "hand-made"},
		},
		"spec": map[string]interface{}{
			"classRef": map[string]interface{}{"name": "default"},
			"weight":   int64(10),
			"zones":    []interface{}{"us-west-2a", "us-west-2b"},
		},
		"status": map[string]interface{}{
			"nodes":      nodes,
			"conditions": []interface{}{map[string]interface{}{"type": "Ready", "status": "True"}},
		},
	}}
	return u
}

func TestGenericGetAndDescribe(t *testing.T) {
	store := map[string]*unstructured.Unstructured{}
	wk := widgetKind(&store)
	serveKinds(t, wk)
	s := cluster.New("", 1)
	wk.Put(s, "big", widget(s, "big", 12))
	small := widget(s, "small", 3)
	delete(small.Object["spec"].(map[string]interface{}), "classRef")
	wk.Put(s, "small", small)
	s.Events = append(s.Events, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "big.1", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Widget", Name: "big", UID: "uid-big"},
		Type:           "Normal", Reason: "Grew", Message: "now 12 nodes", Source: corev1.EventSource{Component: "widgets"},
		FirstTimestamp: metav1.NewTime(s.Now.Add(-time.Minute)), LastTimestamp: metav1.NewTime(s.Now.Add(-time.Minute)), Count: 1,
	})

	get := func(opts GetOptions) string {
		t.Helper()
		var out bytes.Buffer
		if err := Get(&out, s, opts); err != nil {
			t.Fatalf("get %v: %v", opts.Args, err)
		}
		return out.String()
	}
	if got, want := get(GetOptions{Args: []string{"widgets"}}),
		"NAME    CLASS     NODES   READY   AGE\n"+
			"big     default   12      True    5m\n"+
			"small             3       True    5m\n"; got != want {
		t.Errorf("get widgets:\n%s\nwant:\n%s", got, want)
	}
	if got, want := get(GetOptions{Args: []string{"wd.example.com", "big"}, Output: "wide", NoHeaders: true}),
		"big   default   12    True   5m    10\n"; got != want {
		t.Errorf("get wd.example.com big -o wide:\n%q\nwant:\n%q", got, want)
	}
	if got := get(GetOptions{Args: []string{"widget"}, FieldSelector: "metadata.name=small", Output: "name"}); got != "widget.example.com/small\n" {
		t.Errorf("get widget --field-selector: %q", got)
	}

	var out bytes.Buffer
	if err := Describe(&out, s, "widget", "", []string{"big"}, ""); err != nil {
		t.Fatal(err)
	}
	want := `Name:         big
Namespace:    
Labels:       team=infra
Annotations:  note: hand-made
API Version:  example.com/v1
Kind:         Widget
Metadata:
  Creation Timestamp:  2025-12-31T23:55:00Z
  UID:                 uid-big
Spec:
  Class Ref:
    Name:  default
  Weight:  10
  Zones:
    us-west-2a
    us-west-2b
Status:
  Conditions:
    Status:  True
    Type:    Ready
  Nodes:     12
Events:
  Type    Reason  Age   From     Message
  ----    ------  ----  ----     -------
  Normal  Grew    60s   widgets  now 12 nodes
`
	if out.String() != want {
		t.Errorf("describe widget big:\n%s\nwant:\n%s", out.String(), want)
	}
}

// A kind without printer columns gets the API server's default: Name, Age.
func TestGenericGetDefaultColumns(t *testing.T) {
	store := map[string]*unstructured.Unstructured{}
	gk := cluster.NewKind(cluster.Kind{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"},
		Resource: "gadgets", Namespaced: true}, func(*cluster.State) *map[string]*unstructured.Unstructured { return &store })
	serveKinds(t, gk)
	s := cluster.New("", 1)
	g := widget(s, "g", 1)
	g.SetKind("Gadget")
	g.SetNamespace("default")
	gk.Put(s, "default/g", g)
	var out bytes.Buffer
	if err := Get(&out, s, GetOptions{Args: []string{"gadgets"}, AllNamespaces: true}); err != nil {
		t.Fatal(err)
	}
	if want := "NAMESPACE   NAME   AGE\ndefault     g      5m\n"; out.String() != want {
		t.Errorf("get gadgets -A:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestSmartLabelFor(t *testing.T) {
	for in, want := range map[string]string{
		"apiVersion": "API Version", "creationTimestamp": "Creation Timestamp", "uid": "UID",
		"nodeClassRef": "Node Class Ref", "URLPath": "URL Path", "ipv4": "ipv4", "foo-bar": "Foo - Bar", "a.b": "a.b",
	} {
		if got := smartLabelFor(in); got != want {
			t.Errorf("smartLabelFor(%q) = %q, want %q", in, got, want)
		}
	}
}
