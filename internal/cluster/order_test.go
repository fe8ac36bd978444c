package cluster

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestCreationOrder(t *testing.T) {
	s := New("", 1)
	add := func(name string, record bool) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
		p.ResourceVersion = s.Bump()
		if record {
			s.NoteCreated(p.UID)
		}
		s.Pods[Key("default", name)] = p
	}
	add("zeta", true)
	add("alpha", true)
	add("mid", true)
	// Objects without a revision (older states, fixtures) come first, by key.
	add("legacy-b", false)
	add("legacy-a", false)
	got := CreationOrder(s, s.Pods)
	want := []string{"default/legacy-a", "default/legacy-b", "default/zeta", "default/alpha", "default/mid"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CreationOrder = %v, want %v", got, want)
	}
}

func TestCreateRevisionsPersistAndPrune(t *testing.T) {
	s := New("", 1)
	for _, name := range []string{"b", "a"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
		p.ResourceVersion = s.Bump()
		s.NoteCreated(p.UID)
		s.Pods[Key("default", name)] = p
	}
	delete(s.Pods, "default/b")
	dir := t.TempDir()
	if err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := loaded.CreateRevisions; !reflect.DeepEqual(got, map[types.UID]int64{"uid-a": 2}) {
		t.Fatalf("revisions after save/load = %v, want only uid-a at 2", got)
	}
}
