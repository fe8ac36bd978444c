package cluster

// ObjectSet stands for which objects the state holds, not for what they
// hold: it changes when an object is created (NoteCreated), replaced by
// another one under its key (NoteReplaced), or removed (the number of
// stored objects falls). Controllers whose pass depends only on facts
// that are fixed for an object's life (a pod's schedulerName, owner
// references that only claims edit, and claims only name live owners)
// skip the pass while it has not changed
// (docs/simulation-speed.md#passes-over-a-set-of-objects-that-did-not-change-session-24).
//
// A removal can hide behind a creation only if both happen; the creation
// moves the counter, so equal tokens mean no object came or went. The
// token is not saved: a new process starts with fresh controllers, whose
// first pass never skips.
type ObjectSet struct {
	changes int64
	count   int
}

// ObjectSet returns the current token. It counts the objects of every
// kind (a length per kind, no walk).
func (s *State) ObjectSet() ObjectSet {
	n := 0
	for _, k := range Kinds {
		n += k.Len(s)
	}
	return ObjectSet{changes: s.objectSetGen, count: n}
}

// NoteReplaced records that a stored object was replaced by a new one
// under the same key (an update through the API server's Update path),
// whose owner references and spec may differ from the old one's.
func (s *State) NoteReplaced() { s.objectSetGen++ }

// BindsAndDeletes counts, in this process, the bindings (BindPod) and the
// deletion marks (a deletionTimestamp set or moved: GracefulDeletePod,
// MarkDeleting): the writes that put an existing pod on a node or start
// its end without changing the object set. The pod garbage collector's
// candidates change only with those and the object set.
func (s *State) BindsAndDeletes() int64 { return s.bindsAndDeletes }
