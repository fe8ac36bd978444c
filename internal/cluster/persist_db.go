package cluster

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-sim/berth/internal/store"
)

// storeMemo is what the database held when the state was loaded or last
// saved: a fingerprint of every stored value, so that Save writes only what
// changed without trusting every writer to bump resourceVersion.
type storeMemo struct {
	path    string
	objects map[string]map[string]uint64 // bucket -> key -> hash
	meta    map[string]uint64
	// eventList is the event log as loaded or saved (the log is a slice,
	// so an event's identity is its pointer), with each event's sequence
	// key and hash at the same index.
	eventList   []*corev1.Event
	eventSeqs   []uint64
	eventHashes []uint64
	lastSeq     uint64
}

func newMemo(path string) *storeMemo {
	return &storeMemo{path: path, objects: map[string]map[string]uint64{}, meta: map[string]uint64{}}
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// loadDB reads the database at path into a new State: whole when scope
// is nil, else only what it names (such a state is Partial and cannot be
// saved).
func loadDB(path string, scope *Scope) (*State, error) {
	l := stateLayout()
	s := &State{}
	memo := newMemo(path)
	// The load allocates the whole cluster and keeps nearly all of it:
	// collecting while the heap only grows is wasted work, and so is
	// collecting right after it (persist_gc.go).
	defer resumeGC(debug.SetGCPercent(-1))
	var want func(string) bool
	if scope != nil {
		want = scope.buckets(l)
	}
	err := store.Read(path, want, func(b map[string][]store.KV) error {
		meta := b[metaBucket]
		if scope != nil {
			meta = slices.DeleteFunc(meta, func(kv store.KV) bool { return slices.Contains(controllerMemory, string(kv.Key)) })
		}
		if err := s.readMeta(l, meta, memo); err != nil {
			return err
		}
		if scope != nil {
			scope.filter(l, b)
		}
		return s.readObjects(l, b, memo)
	})
	if err != nil {
		return nil, err
	}
	s.init()
	if err := s.validate(); err != nil {
		return nil, err
	}
	if scope == nil {
		s.stored = memo
	}
	s.partial = scope != nil
	return s, nil
}

// controllerMemory are the meta entries no view reads, the largest of a
// big cluster (a create revision per object, a queue entry per pending
// pod): a partial load leaves them out.
var controllerMemory = []string{"createRevisions", "scheduler"}

// buckets is the bucket filter of a partial load: the meta entries always,
// the kinds named and the event log when some events are wanted.
func (sc *Scope) buckets(l *layout) func(string) bool {
	names := map[string]bool{metaBucket: true, eventsBucket: sc.Events != nil}
	for _, ob := range l.objects {
		names[ob.name] = sc.Kinds == nil || slices.Contains(sc.Kinds, ob.kind)
	}
	return func(bucket string) bool { return names[bucket] }
}

// filter drops the stored entries the scope does not pick, before any of
// them is decoded.
func (sc *Scope) filter(l *layout, b map[string][]store.KV) {
	if sc.Events != nil {
		b[eventsBucket] = filterEvents(b[eventsBucket], sc.Events)
	}
	for _, ob := range l.objects {
		pick := sc.Objects[ob.kind]
		if pick == nil {
			continue
		}
		var kept []store.KV
		for _, kv := range b[ob.name] {
			if pick(kv.Key, kv.Value) {
				kept = append(kept, kv)
			}
		}
		b[ob.name] = kept
	}
}

// filterEvents keeps the events whose involvedObject.name (Event field 2,
// ObjectReference field 3) keep accepts, reading the name from the
// encoding without decoding the event.
func filterEvents(kvs []store.KV, keep func(string) bool) []store.KV {
	var out []store.KV
	for _, kv := range kvs {
		name, ok := store.Field(kv.Value, 2, 3)
		if !ok || keep(string(name)) {
			out = append(out, kv)
		}
	}
	return out
}

// readMeta checks the format version, then decodes the non-object fields.
// Entries this berth does not know are ignored, as unknown JSON fields were.
func (s *State) readMeta(l *layout, kvs []store.KV, memo *storeMemo) error {
	version := -1
	for _, kv := range kvs {
		if string(kv.Key) == "formatVersion" {
			v, err := strconv.Atoi(string(kv.Value))
			if err != nil {
				return fmt.Errorf("not a berth state database: formatVersion is %q", kv.Value)
			}
			version = v
		}
	}
	switch {
	case version < 0:
		return fmt.Errorf("not a berth state database: no formatVersion in the %s bucket", metaBucket)
	case version > FormatVersion:
		return fmt.Errorf("state format version %d is newer than this berth reads (version %d): upgrade berth, or run `berth reset`", version, FormatVersion)
	case version < FormatVersion:
		return fmt.Errorf("state format version %d is not one this berth reads (version %d): run `berth reset`", version, FormatVersion)
	}
	v := reflect.ValueOf(s).Elem()
	for _, kv := range kvs {
		name := string(kv.Key)
		i := slices.IndexFunc(l.meta, func(f metaField) bool { return f.name == name })
		if i < 0 {
			continue
		}
		if err := json.Unmarshal(kv.Value, v.Field(l.meta[i].field).Addr().Interface()); err != nil {
			return fmt.Errorf("%s %s: %w", metaBucket, name, err)
		}
		memo.meta[name] = store.Hash(kv.Value)
	}
	return nil
}

// decoded is one bucket's entries, decoded in place by parallel jobs.
type decoded struct {
	bucket objectBucket // zero for events
	kvs    []store.KV
	keys   []string
	objs   []runtime.Object
	hashes []uint64
	err    error
}

// readObjects decodes every object bucket and the event log on all cores,
// then files the objects in their maps.
func (s *State) readObjects(l *layout, b map[string][]store.KV, memo *storeMemo) error {
	var parts []*decoded
	for _, ob := range l.objects {
		parts = append(parts, &decoded{bucket: ob, kvs: b[ob.name]})
	}
	events := &decoded{kvs: b[eventsBucket]}
	parts = append(parts, events)
	type job struct {
		d        *decoded
		from, to int
	}
	var jobs []job
	for _, d := range parts {
		d.keys = make([]string, len(d.kvs))
		d.objs = make([]runtime.Object, len(d.kvs))
		d.hashes = make([]uint64, len(d.kvs))
		for from := 0; from < len(d.kvs); from += chunk {
			jobs = append(jobs, job{d, from, min(from+chunk, len(d.kvs))})
		}
	}
	errs := make([]error, len(jobs))
	runJobs(len(jobs), func(j int) {
		errs[j] = jobs[j].d.decode(jobs[j].from, jobs[j].to)
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	v := reflect.ValueOf(s).Elem()
	for _, d := range parts[:len(parts)-1] {
		field := v.Field(d.bucket.field)
		m := reflect.MakeMapWithSize(field.Type(), len(d.objs))
		hashes := make(map[string]uint64, len(d.objs))
		for i, obj := range d.objs {
			m.SetMapIndex(reflect.ValueOf(d.keys[i]), reflect.ValueOf(obj))
			hashes[d.keys[i]] = d.hashes[i]
		}
		field.Set(m)
		memo.objects[d.bucket.name] = hashes
	}
	s.Events = make([]*corev1.Event, len(events.objs))
	memo.eventSeqs = make([]uint64, len(events.objs))
	for i, obj := range events.objs {
		s.Events[i] = obj.(*corev1.Event)
		memo.eventSeqs[i] = binary.BigEndian.Uint64(events.kvs[i].Key)
		memo.lastSeq = max(memo.lastSeq, memo.eventSeqs[i])
	}
	memo.eventList, memo.eventHashes = slices.Clone(s.Events), events.hashes
	return nil
}

func (d *decoded) decode(from, to int) error {
	for i := from; i < to; i++ {
		kv := d.kvs[i]
		if d.bucket.kind == nil {
			if len(kv.Key) != 8 {
				return fmt.Errorf("%s: key %x is not a sequence number", eventsBucket, kv.Key)
			}
			e := &corev1.Event{}
			if err := store.Decode(kv.Value, e, EventKind.GVK); err != nil {
				return fmt.Errorf("%s %d: %w", eventsBucket, binary.BigEndian.Uint64(kv.Key), err)
			}
			d.objs[i] = e
		} else {
			k := d.bucket.kind
			obj := k.New()
			if err := store.Decode(kv.Value, obj, k.GVK); err != nil {
				return fmt.Errorf("%s %q: %w", d.bucket.name, kv.Key, err)
			}
			// The envelope names the type; objects in memory carry it as
			// they did when they were stored as JSON.
			obj.GetObjectKind().SetGroupVersionKind(k.GVK)
			d.objs[i] = obj
		}
		d.keys[i] = string(kv.Key)
		d.hashes[i] = store.Hash(kv.Value)
	}
	return nil
}

// saveDB writes s to the database at path: the changes since the memo when
// the state came from there, else a complete new file.
func (s *State) saveDB(path string) error {
	if s.partial {
		return fmt.Errorf("the state was loaded in part, for reading only")
	}
	l := stateLayout()
	old := s.stored
	full := old == nil || old.path != path
	if !full {
		if _, err := os.Stat(path); err != nil {
			full = true
		}
	}
	if full {
		next, err := s.saveFull(l, path)
		if err != nil {
			return err
		}
		s.stored = next
		return nil
	}
	next := newMemo(path)
	changes, err := s.metaChanges(l, old, next, false)
	if err != nil {
		return err
	}
	objChanges, err := s.objectChanges(l, old, next, false)
	if err != nil {
		return err
	}
	changes = append(changes, objChanges...)
	evChange, err := s.eventChanges(old, next, false)
	if err != nil {
		return err
	}
	changes = append(changes, evChange)
	if hasWrites(changes) {
		if err := store.Write(path, changes); err != nil {
			return err
		}
	}
	s.stored = next
	return nil
}

func hasWrites(changes []store.Change) bool {
	for _, c := range changes {
		if c.Reset || len(c.Put) > 0 || len(c.Delete) > 0 {
			return true
		}
	}
	return false
}

func (s *State) metaChanges(l *layout, old, next *storeMemo, full bool) ([]store.Change, error) {
	c := store.Change{Bucket: metaBucket, Reset: full}
	v := reflect.ValueOf(s).Elem()
	for _, f := range l.meta {
		var data []byte
		var err error
		if f.name == "formatVersion" {
			data = []byte(strconv.Itoa(FormatVersion))
		} else if data, err = marshalMeta(v.Field(f.field).Interface()); err != nil {
			return nil, fmt.Errorf("%s %s: %w", metaBucket, f.name, err)
		}
		h := store.Hash(data)
		next.meta[f.name] = h
		if was, ok := old.meta[f.name]; !ok || was != h {
			c.Put = append(c.Put, store.KV{Key: []byte(f.name), Value: data})
		}
	}
	return []store.Change{c}, nil
}

// encoded is one bucket's objects, encoded by parallel jobs; unchanged ones
// keep only their hash.
type encoded struct {
	bucket objectBucket
	keys   []string
	objs   []runtime.Object
	data   [][]byte
	hashes []uint64
	old    map[string]uint64
}

func (s *State) objectChanges(l *layout, old, next *storeMemo, full bool) ([]store.Change, error) {
	v := reflect.ValueOf(s).Elem()
	var parts []*encoded
	for _, ob := range l.objects {
		m := v.Field(ob.field)
		e := &encoded{bucket: ob, old: old.objects[ob.name]}
		e.keys = make([]string, 0, m.Len())
		for _, k := range m.MapKeys() {
			e.keys = append(e.keys, k.String())
		}
		slices.Sort(e.keys)
		e.objs = make([]runtime.Object, len(e.keys))
		for i, k := range e.keys {
			e.objs[i] = m.MapIndex(reflect.ValueOf(k)).Interface().(runtime.Object)
		}
		e.data = make([][]byte, len(e.keys))
		e.hashes = make([]uint64, len(e.keys))
		parts = append(parts, e)
	}
	type job struct {
		e        *encoded
		from, to int
	}
	var jobs []job
	for _, e := range parts {
		for from := 0; from < len(e.keys); from += chunk {
			jobs = append(jobs, job{e, from, min(from+chunk, len(e.keys))})
		}
	}
	errs := make([]error, len(jobs))
	runJobs(len(jobs), func(j int) {
		e := jobs[j].e
		var scratch []byte
		for i := jobs[j].from; i < jobs[j].to; i++ {
			data, err := store.AppendEncoded(scratch[:0], e.objs[i], e.bucket.kind.GVK)
			if err != nil {
				errs[j] = fmt.Errorf("%s %q: %w", e.bucket.name, e.keys[i], err)
				return
			}
			scratch = data
			e.hashes[i] = store.Hash(data)
			if was, ok := e.old[e.keys[i]]; !ok || was != e.hashes[i] {
				e.data[i] = bytes.Clone(data)
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	var changes []store.Change
	for _, e := range parts {
		c := store.Change{Bucket: e.bucket.name, Reset: full}
		hashes := make(map[string]uint64, len(e.keys))
		for i, k := range e.keys {
			hashes[k] = e.hashes[i]
			if e.data[i] != nil {
				c.Put = append(c.Put, store.KV{Key: []byte(k), Value: e.data[i]})
			}
		}
		var gone []string
		for k := range e.old {
			if _, ok := hashes[k]; !ok {
				gone = append(gone, k)
			}
		}
		slices.Sort(gone)
		for _, k := range gone {
			c.Delete = append(c.Delete, []byte(k))
		}
		next.objects[e.bucket.name] = hashes
		if full || len(c.Put) > 0 || len(c.Delete) > 0 {
			changes = append(changes, c)
		}
	}
	return changes, nil
}

// eventChanges keeps each known event under its sequence key and gives new
// ones the next numbers. Events are appended at the end of the log, so the
// keys stay in log order; when they would not (an event inserted earlier,
// the log reordered), the bucket is rewritten in order.
func (s *State) eventChanges(old, next *storeMemo, full bool) (store.Change, error) {
	n := len(s.Events)
	data := make([][]byte, n)
	hashes := make([]uint64, n)
	// The common case: the log saved last is a prefix of this one (events
	// were folded into in place and appended); positions then match.
	prefix := !full && len(old.eventList) <= n
	for i := 0; prefix && i < len(old.eventList); i++ {
		prefix = s.Events[i] == old.eventList[i]
	}
	var oldAt map[*corev1.Event]int
	if !full && !prefix {
		oldAt = make(map[*corev1.Event]int, len(old.eventList))
		for i, e := range old.eventList {
			oldAt[e] = i
		}
	}
	// unchanged reports whether event i is stored with this hash under
	// its old key, so it need not be kept encoded.
	unchanged := func(i int, h uint64) bool {
		if prefix {
			return i < len(old.eventList) && old.eventHashes[i] == h
		}
		if j, ok := oldAt[s.Events[i]]; ok {
			return old.eventHashes[j] == h
		}
		return false
	}
	errs := make([]error, (n+chunk-1)/chunk)
	runJobs(len(errs), func(j int) {
		var scratch []byte
		for i := j * chunk; i < min((j+1)*chunk, n); i++ {
			b, err := store.AppendEncoded(scratch[:0], s.Events[i], EventKind.GVK)
			if err != nil {
				errs[j] = fmt.Errorf("%s[%d]: %w", eventsBucket, i, err)
				return
			}
			scratch = b
			hashes[i] = store.Hash(b)
			if full || !unchanged(i, hashes[i]) {
				data[i] = bytes.Clone(b)
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return store.Change{}, err
		}
	}
	var err error
	c := store.Change{Bucket: eventsBucket, Reset: full}
	seqs := make([]uint64, n)
	last := old.lastSeq
	inOrder := !full
	if prefix {
		copy(seqs, old.eventSeqs)
		for i := len(old.eventList); i < n; i++ {
			last++
			seqs[i] = last
		}
	} else if !full {
		used := make(map[*corev1.Event]bool, n)
		prev := uint64(0)
		for i, e := range s.Events {
			j, known := oldAt[e]
			seq := uint64(0)
			if known && !used[e] {
				seq = old.eventSeqs[j]
			} else {
				last++
				seq = last
			}
			used[e] = true
			if seq <= prev {
				inOrder = false
				break
			}
			prev, seqs[i] = seq, seq
		}
	}
	if !inOrder && !prefix {
		// Number the log afresh from 1 and write all of it.
		c.Reset = true
		for i := range seqs {
			seqs[i] = uint64(i + 1)
		}
		last = uint64(n)
	}
	next.eventList, next.eventSeqs, next.eventHashes, next.lastSeq = slices.Clone(s.Events), seqs, hashes, last
	for i, e := range s.Events {
		if data[i] == nil {
			// Unchanged, but stored under another key (renumbered, or a
			// second copy of an event in the log): write it again.
			stale := c.Reset
			if !stale && !prefix {
				j := oldAt[e]
				stale = old.eventSeqs[j] != seqs[i]
			}
			if stale {
				if data[i], err = store.Encode(e, EventKind.GVK); err != nil {
					return store.Change{}, err
				}
			}
		}
		if data[i] != nil {
			c.Put = append(c.Put, store.KV{Key: seqKey(seqs[i]), Value: data[i]})
		}
	}
	if !c.Reset && !prefix {
		// Keys of events no longer in the log.
		kept := make(map[uint64]bool, n)
		for _, seq := range seqs {
			kept[seq] = true
		}
		for _, seq := range old.eventSeqs {
			if !kept[seq] {
				c.Delete = append(c.Delete, seqKey(seq))
			}
		}
	}
	return c, nil
}
