package cluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKindForResourceResolvesAsKubectl(t *testing.T) {
	for name, want := range map[string]string{
		"pods": "pods", "pod": "pods", "po": "pods", "PODS": "pods", "Pod": "pods",
		"deployments.apps": "deployments.apps", "deployment.apps": "deployments.apps", "deploy.apps": "deployments.apps",
		"deploy": "deployments.apps", "svc": "services", "pvc": "persistentvolumeclaims", "pdb": "poddisruptionbudgets.policy",
		"sc": "storageclasses.storage.k8s.io", "ns": "namespaces", "no": "nodes", "ev": "events", "events": "events",
		"csinode": "csinodes.storage.k8s.io", "pc": "priorityclasses.scheduling.k8s.io",
	} {
		k := KindForResource(name)
		if k == nil || k.GroupResource() != want {
			t.Errorf("KindForResource(%q) = %v, want %s", name, k, want)
		}
	}
	for _, name := range []string{"x", "pods.apps", "deploy.batch", "deployments.", ""} {
		if k := KindForResource(name); k != nil {
			t.Errorf("KindForResource(%q) = %s, want none", name, k.GroupResource())
		}
	}
}

func TestEveryServedNameResolvesToOneKind(t *testing.T) {
	owner := map[string]*Kind{}
	for _, k := range ServedKinds() {
		for _, n := range append([]string{k.Resource, k.SingularName(), k.GroupResource()}, k.ShortNames...) {
			if o, ok := owner[n]; ok && o != k {
				t.Errorf("%q names both %s and %s", n, o.GVK.Kind, k.GVK.Kind)
			}
			owner[n] = k
			if got := KindForResource(n); got != k {
				t.Errorf("KindForResource(%q) = %v, want %s", n, got, k.GVK.Kind)
			}
		}
	}
}

// `kubectl get all` lists its kinds in discovery order.
func TestAllCategoryInDiscoveryOrder(t *testing.T) {
	var got []string
	for _, k := range ServedKinds().InCategory("all") {
		got = append(got, k.Resource)
	}
	want := "pods services daemonsets deployments replicasets statefulsets jobs"
	if strings.Join(got, " ") != want {
		t.Errorf("all = %v, want %s", got, want)
	}
}

func TestEventKindReadsTheEventLog(t *testing.T) {
	s := New("", 1)
	ev := func(ns, name string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	s.Events = []*corev1.Event{ev("b", "y"), ev("a", "z"), ev("b", "x")}
	var got []string
	for _, obj := range EventKind.List(s) {
		e := obj.(*corev1.Event)
		got = append(got, Key(e.Namespace, e.Name))
	}
	if strings.Join(got, " ") != "a/z b/x b/y" {
		t.Errorf("List = %v, want namespace/name order", got)
	}
	if e, ok := EventKind.Get(s, "b/x"); !ok || e != s.Events[2] {
		t.Errorf("Get(b/x) = %v, %v", e, ok)
	}
	EventKind.Remove(s, "a/z")
	if len(s.Events) != 2 || KindOf(s.Events[0]) != nil {
		t.Errorf("after Remove: %d events; events are not a stored kind", len(s.Events))
	}
}
