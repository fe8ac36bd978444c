package cluster

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestKindsStoreInTheirTypedMaps(t *testing.T) {
	s := New("", 1)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	k := KindOf(pod)
	if k == nil || k.GroupResource() != "pods" || !k.Namespaced {
		t.Fatalf("KindOf(pod) = %+v", k)
	}
	k.Put(s, Key("ns", "p"), pod)
	if s.Pods["ns/p"] != pod {
		t.Error("Put did not store into State.Pods")
	}
	if got, ok := k.Get(s, "ns/p"); !ok || got != pod {
		t.Error("Get did not find the pod")
	}
	k.Remove(s, "ns/p")
	if len(k.List(s)) != 0 {
		t.Error("Remove left the pod")
	}
	sts := KindFor(schema.GroupKind{Group: "apps", Kind: "StatefulSet"})
	if sts == nil || sts.GroupResource() != "statefulsets.apps" {
		t.Fatalf("KindFor(StatefulSet) = %+v", sts)
	}
	sts.Put(s, "b/y", &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "y"}})
	sts.Put(s, "a/x", &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "x"}})
	list := sts.List(s)
	if len(list) != 2 || list[0].(*appsv1.StatefulSet).Name != "x" {
		t.Errorf("List is not in key order: %v", list)
	}
	seen := map[schema.GroupKind]bool{}
	for _, k := range Kinds {
		if seen[k.GVK.GroupKind()] {
			t.Errorf("%v registered twice", k.GVK)
		}
		seen[k.GVK.GroupKind()] = true
	}
}
