package cluster

import (
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
	// events maps each loaded or saved event to its sequence key; the log
	// is a slice, so identity is the pointer.
	events  map[*corev1.Event]eventMemo
	lastSeq uint64
}

type eventMemo struct{ seq, hash uint64 }

func newMemo(path string) *storeMemo {
	return &storeMemo{path: path, objects: map[string]map[string]uint64{}, meta: map[string]uint64{}, events: map[*corev1.Event]eventMemo{}}
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// loadDB reads the database at path into a new State. A partial load
// reads only the events whose involved object's name keepEvents accepts
// (none when it is nil); such a state cannot be saved.
func loadDB(path string, keepEvents func(name string) bool, partial bool) (*State, error) {
	l := stateLayout()
	s := &State{}
	memo := newMemo(path)
	// The load allocates the whole cluster and keeps nearly all of it:
	// collecting while the heap only grows is wasted work.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var want func(string) bool
	if partial && keepEvents == nil {
		want = func(bucket string) bool { return bucket != eventsBucket }
	}
	err := store.Read(path, want, func(b map[string][]store.KV) error {
		if err := s.readMeta(l, b[metaBucket], memo); err != nil {
			return err
		}
		if partial && keepEvents != nil {
			b[eventsBucket] = filterEvents(b[eventsBucket], keepEvents)
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
	s.stored = memo
	s.partial = partial
	return s, nil
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
	parallel(len(jobs), func(j int) {
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
	for i, obj := range events.objs {
		e := obj.(*corev1.Event)
		seq := binary.BigEndian.Uint64(events.kvs[i].Key)
		s.Events[i] = e
		memo.events[e] = eventMemo{seq: seq, hash: events.hashes[i]}
		memo.lastSeq = max(memo.lastSeq, seq)
	}
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
		return fmt.Errorf("the state was loaded without all of its event log, for reading only")
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
		old = newMemo(path)
	}
	next := newMemo(path)
	changes, err := s.metaChanges(l, old, next, full)
	if err != nil {
		return err
	}
	objChanges, err := s.objectChanges(l, old, next, full)
	if err != nil {
		return err
	}
	changes = append(changes, objChanges...)
	evChange, err := s.eventChanges(old, next, full)
	if err != nil {
		return err
	}
	changes = append(changes, evChange)
	if full {
		err = store.Create(path, changes)
	} else if hasWrites(changes) {
		err = store.Write(path, changes)
	}
	if err != nil {
		return err
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
		} else if data, err = json.Marshal(v.Field(f.field).Interface()); err != nil {
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
	parallel(len(jobs), func(j int) {
		e := jobs[j].e
		for i := jobs[j].from; i < jobs[j].to; i++ {
			data, err := store.Encode(e.objs[i], e.bucket.kind.GVK)
			if err != nil {
				errs[j] = fmt.Errorf("%s %q: %w", e.bucket.name, e.keys[i], err)
				return
			}
			e.hashes[i] = store.Hash(data)
			if was, ok := e.old[e.keys[i]]; !ok || was != e.hashes[i] {
				e.data[i] = data
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
	data := make([][]byte, len(s.Events))
	hashes := make([]uint64, len(s.Events))
	errs := make([]error, (len(s.Events)+chunk-1)/chunk)
	parallel(len(errs), func(j int) {
		for i := j * chunk; i < min((j+1)*chunk, len(s.Events)); i++ {
			b, err := store.Encode(s.Events[i], EventKind.GVK)
			if err != nil {
				errs[j] = fmt.Errorf("%s[%d]: %w", eventsBucket, i, err)
				return
			}
			data[i], hashes[i] = b, store.Hash(b)
		}
	})
	for _, err := range errs {
		if err != nil {
			return store.Change{}, err
		}
	}
	c := store.Change{Bucket: eventsBucket, Reset: full}
	seqs := make([]uint64, len(s.Events))
	inOrder := !full
	last, prev := old.lastSeq, uint64(0)
	for i, e := range s.Events {
		m, known := old.events[e]
		if _, dup := next.events[e]; dup || !known {
			last++
			m.seq = last
		}
		if m.seq <= prev {
			inOrder = false
			break
		}
		prev, seqs[i] = m.seq, m.seq
		next.events[e] = eventMemo{seq: m.seq, hash: hashes[i]}
	}
	if !inOrder {
		// Number the log afresh from 1.
		c.Reset = true
		clear(next.events)
		for i, e := range s.Events {
			seqs[i] = uint64(i + 1)
			next.events[e] = eventMemo{seq: seqs[i], hash: hashes[i]}
		}
		last = uint64(len(s.Events))
	}
	next.lastSeq = last
	for i, e := range s.Events {
		if m, ok := old.events[e]; c.Reset || !ok || m.seq != seqs[i] || m.hash != hashes[i] {
			c.Put = append(c.Put, store.KV{Key: seqKey(seqs[i]), Value: data[i]})
		}
	}
	if !c.Reset {
		var gone []uint64
		for e, m := range old.events {
			if n, ok := next.events[e]; !ok || n.seq != m.seq {
				gone = append(gone, m.seq)
			}
		}
		slices.Sort(gone)
		for _, seq := range gone {
			c.Delete = append(c.Delete, seqKey(seq))
		}
	}
	return c, nil
}
