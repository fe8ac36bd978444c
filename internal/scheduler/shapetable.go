package scheduler

import "encoding/binary"

// shapeStamp is what the score and filter memos know about one pod shape's
// records: the snapshot (id and length) and record width they were filled
// for, the epoch stamped on them, and how often and how lately the shape
// was met (docs/scheduler.md#session-24-score).
type shapeStamp struct {
	snap    uint64
	n       int
	epoch   int64
	lastUse int64
	cycles  int
	width   int
}

func (s *shapeStamp) stamp() *shapeStamp { return s }

// stamped is a memo's per-shape record type: a pointer to a struct
// embedding shapeStamp.
type stamped interface{ stamp() *shapeStamp }

// shapeTable holds the memo of up to maxShapes shapes by key; the least
// recently used one is dropped (its arrays reused) when another comes.
type shapeTable[P stamped] struct {
	shapes map[string]P
	// epochs numbers fillings (0 is never a valid stamp); uses orders the
	// shapes by last use.
	epochs, uses int64
}

// maxShapes bounds the shapes a memo keeps.
const maxShapes = 16

// use returns key's memo stamped for sn and width (fresh makes one for a
// new key while the table has room) and whether its records are worth
// using: not on a shape's first cycle in a snapshot (a shape met once is
// not worth an array). widthChanged tells a caller whose stamps sit
// among the records that old records no longer line up.
func (t *shapeTable[P]) use(key []byte, sn *Snapshot, width int, fresh func() P) (sh P, worth, widthChanged bool) {
	if t.shapes == nil {
		t.shapes = map[string]P{}
	}
	t.uses++
	sh, ok := t.shapes[string(key)]
	if !ok {
		if len(t.shapes) >= maxShapes {
			sh = t.evict()
		} else {
			sh = fresh()
		}
		st := sh.stamp()
		st.snap, st.n = 0, -1
		t.shapes[string(key)] = sh
	}
	st := sh.stamp()
	st.lastUse = t.uses
	if st.snap != sn.id || st.n != len(sn.nodes) || st.width != width {
		widthChanged = st.width != width
		t.epochs++
		st.snap, st.n, st.width, st.epoch, st.cycles = sn.id, len(sn.nodes), width, t.epochs, 0
	}
	st.cycles++
	return sh, st.cycles >= 2, widthChanged
}

// evict removes the least recently used shape (the smaller key among
// equals, so the choice never depends on map order) and returns it.
func (t *shapeTable[P]) evict() P {
	var oldest string
	var sh P
	found := false
	for k, s := range t.shapes {
		if u, o := s.stamp().lastUse, sh; !found || u < o.stamp().lastUse || (u == o.stamp().lastUse && k < oldest) {
			sh, oldest, found = s, k, true
		}
	}
	delete(t.shapes, oldest)
	return sh
}

// appendShapeKey adds plugin i's spelling of the pod (part) to a memo's
// shape key, length-prefixed so that no two sequences of parts spell the
// same key.
func appendShapeKey(key []byte, i int, part []byte) []byte {
	key = binary.AppendUvarint(key, uint64(i))
	key = binary.AppendUvarint(key, uint64(len(part)))
	return append(key, part...)
}
