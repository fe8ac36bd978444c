package cluster

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Creation order (docs/ordering.md). A real cluster hands objects to its
// controllers and to the scheduling queue in the order the API server created
// them: informers deliver events in etcd revision order and work queues are
// FIFO. berth keeps each object's create revision (the resourceVersion it got
// when it was created, as etcd's create_revision) and serves objects in that
// order wherever upstream has arrival order, never in name order.

// NoteCreated records that the object with uid was created by the latest
// write (the current ResourceVersion). Every code path that creates an
// object calls it right after bumping the resource version.
func (s *State) NoteCreated(uid types.UID) {
	s.objectSetGen++ // ObjectSet: a new object, whatever its uid
	if uid == "" {
		return
	}
	if s.CreateRevisions == nil {
		s.CreateRevisions = map[types.UID]int64{}
	}
	s.CreateRevisions[uid] = s.ResourceVersion
}

// CreationOrder returns the keys of an object map ordered by create
// revision, ties (revision 0) by key.
func CreationOrder[T metav1.Object](s *State, objects map[string]T) []string {
	keys := make([]string, 0, len(objects))
	for k := range objects {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return createdBefore(s, objects[keys[i]], objects[keys[j]], keys[i], keys[j]) })
	return keys
}

// createdBefore compares create revisions, then the keys given.
func createdBefore(s *State, a, b metav1.Object, keyA, keyB string) bool {
	if ra, rb := s.CreateRevisions[a.GetUID()], s.CreateRevisions[b.GetUID()]; ra != rb {
		return ra < rb
	}
	return keyA < keyB
}

// SortByCreation orders objects by create revision, ties (revision 0) by
// namespace/name.
//
// Each object's revision is looked up once, before sorting, and keys are
// only built for objects whose revisions tie: the comparison callback of
// a plain sort.Slice did two map lookups and built two keys per
// comparison, which made this the scheduler's largest cost outside its
// cycle with 100,000 new pods (docs/simulation-speed.md). Objects already
// in order (the common case: callers collect them in creation order) are
// left as they are after one linear check.
func SortByCreation[T metav1.Object](s *State, objs []T) {
	if len(objs) < 2 {
		return
	}
	type entry struct {
		rev int64
		obj T
	}
	es := make([]entry, len(objs))
	sorted := true
	for i, o := range objs {
		es[i] = entry{rev: s.CreateRevisions[o.GetUID()], obj: o}
		if sorted && i > 0 && !createdBeforeRev(es[i-1].rev, es[i].rev, es[i-1].obj, o) {
			sorted = false
		}
	}
	if sorted {
		return
	}
	slices.SortFunc(es, func(a, b entry) int {
		if a.rev != b.rev {
			return cmp.Compare(a.rev, b.rev)
		}
		return strings.Compare(Key(a.obj.GetNamespace(), a.obj.GetName()), Key(b.obj.GetNamespace(), b.obj.GetName()))
	})
	for i := range es {
		objs[i] = es[i].obj
	}
}

// createdBeforeRev is createdBefore with the revisions already looked up.
func createdBeforeRev(ra, rb int64, a, b metav1.Object) bool {
	if ra != rb {
		return ra < rb
	}
	return Key(a.GetNamespace(), a.GetName()) < Key(b.GetNamespace(), b.GetName())
}

// pruneCreateRevisions forgets the revisions of objects that no longer
// exist, so the map does not grow with every pod ever deleted.
func (s *State) pruneCreateRevisions() {
	if len(s.CreateRevisions) == 0 {
		return
	}
	live := make(map[types.UID]bool, len(s.CreateRevisions))
	for _, k := range Kinds {
		k.eachUID(s, func(uid types.UID) { live[uid] = true })
	}
	for uid := range s.CreateRevisions {
		if !live[uid] {
			delete(s.CreateRevisions, uid)
		}
	}
}
