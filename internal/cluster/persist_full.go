package cluster

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-sim/berth/internal/store"
)

// fullBatch is how many entries a complete save encodes at a time: enough
// to keep the cores busy, few enough that a batch's encodings (two batches
// are in flight) stay a few tens of megabytes however large the cluster.
const fullBatch = 8192

// saveFull writes s as a new database at path (a state saved where it was
// not loaded from): every bucket in key order, in batches of encodings made
// on all cores into reused buffers, each laid out in pages by
// store.Creator while the next is encoded (docs/state.md#the-fresh-file-write).
// It returns the memo of what it wrote.
func (s *State) saveFull(l *layout, path string) (*storeMemo, error) {
	next := newMemo(path)
	meta, err := s.metaChanges(l, newMemo(path), next, true)
	if err != nil {
		return nil, err
	}
	c, err := store.NewCreator(path)
	if err != nil {
		return nil, err
	}
	w := &batchWriter{c: c}
	if err := w.save(s, l, meta[0].Put, next); err != nil {
		c.Abort()
		return nil, err
	}
	if err := c.Close(); err != nil {
		return nil, err
	}
	return next, nil
}

// batchWriter encodes batches into per-job arenas that are reused once
// the batch is in the Creator's pages.
type batchWriter struct {
	c       *store.Creator
	batches [2]encodedBatch
	kvs     []store.KV
}

// arenaBlock is the size of an arena's blocks: a few hundred encoded pods.
const arenaBlock = 256 << 10

// arena holds one job's encoded values of a batch. An object is encoded
// straight into the rest of the current block; one that does not fit there
// is encoded on its own and copied to the next block. Blocks never grow, so
// values already cut from them stay put: one growing buffer per job copied
// itself at every growth (five times its final size) and left the copies
// to the collector, at the end of a command whose heap is the whole
// cluster (docs/state.md#speed). reset keeps the blocks for the next batch.
type arena struct {
	blocks [][]byte
	cur    int // index of the block being filled
}

// encode appends obj's stored form to the arena and returns it.
func (a *arena) encode(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	if a.cur == len(a.blocks) {
		a.blocks = append(a.blocks, make([]byte, 0, arenaBlock))
	}
	b := a.blocks[a.cur]
	// The rest of the block, capped so that an encoding that outgrows it
	// moves to memory of its own instead of past the block's end.
	rest := b[len(b):len(b):cap(b)]
	val, err := store.AppendEncoded(rest, obj, gvk)
	if err != nil {
		return nil, err
	}
	if cap(rest) > 0 && len(val) > 0 && unsafe.SliceData(val) == unsafe.SliceData(rest) {
		a.blocks[a.cur] = b[:len(b)+len(val)]
		return val[:len(val):len(val)], nil
	}
	return a.add(val), nil
}

func (a *arena) reset() {
	for i := range a.blocks {
		a.blocks[i] = a.blocks[i][:0]
	}
	a.cur = 0
}

// add copies val into the arena and returns the copy.
func (a *arena) add(val []byte) []byte {
	for {
		if a.cur == len(a.blocks) {
			a.blocks = append(a.blocks, make([]byte, 0, max(arenaBlock, len(val))))
		}
		b := a.blocks[a.cur]
		if cap(b)-len(b) >= len(val) {
			start := len(b)
			b = append(b, val...)
			a.blocks[a.cur] = b
			return b[start:len(b):len(b)]
		}
		a.cur++
	}
}

func (w *batchWriter) save(s *State, l *layout, meta []store.KV, next *storeMemo) error {
	// The new file takes each bucket's keys in order.
	meta = slices.Clone(meta)
	slices.SortFunc(meta, func(a, b store.KV) int { return bytes.Compare(a.Key, b.Key) })
	if err := w.c.Put(metaBucket, meta); err != nil {
		return err
	}
	v := reflect.ValueOf(s).Elem()
	for _, ob := range l.objects {
		m := v.Field(ob.field)
		keys := make([]string, 0, m.Len())
		for _, k := range m.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		objs := make([]runtime.Object, len(keys))
		for i, k := range keys {
			objs[i] = m.MapIndex(reflect.ValueOf(k)).Interface().(runtime.Object)
		}
		hashes := make([]uint64, len(keys))
		key := func(i int) []byte { return unsafe.Slice(unsafe.StringData(keys[i]), len(keys[i])) }
		if err := w.bucket(ob.name, objs, key, ob.kind.GVK, hashes); err != nil {
			return err
		}
		byKey := make(map[string]uint64, len(keys))
		for i, k := range keys {
			byKey[k] = hashes[i]
		}
		next.objects[ob.name] = byKey
	}
	n := len(s.Events)
	objs := make([]runtime.Object, n)
	seqs := make([]uint64, n)
	for i, e := range s.Events {
		objs[i], seqs[i] = e, uint64(i+1)
	}
	hashes := make([]uint64, n)
	seqKeys := make([]byte, 8*n)
	for i, seq := range seqs {
		binary.BigEndian.PutUint64(seqKeys[8*i:], seq)
	}
	if err := w.bucket(eventsBucket, objs, func(i int) []byte { return seqKeys[8*i : 8*i+8] }, EventKind.GVK, hashes); err != nil {
		return err
	}
	next.eventList, next.eventSeqs, next.eventHashes, next.lastSeq = slices.Clone(s.Events), seqs, hashes, uint64(n)
	return nil
}

// encodedBatch is one batch of a bucket encoded: its values, cut from
// the arenas of its jobs, which stay untouched until the batch is written.
type encodedBatch struct {
	from, to int
	arenas   []*arena
	vals     [][]byte
	errs     []error
	done     chan struct{}
}

// encode starts encoding objs[from:to] into b on all cores.
func (b *encodedBatch) encode(name string, objs []runtime.Object, key func(i int) []byte, gvk schema.GroupVersionKind, hashes []uint64, from, to int) {
	jobs := (to - from + chunk - 1) / chunk
	for len(b.arenas) < jobs {
		b.arenas = append(b.arenas, &arena{})
	}
	b.from, b.to = from, to
	b.vals = slices.Grow(b.vals[:0], to-from)[:to-from]
	b.errs = slices.Grow(b.errs[:0], jobs)[:jobs]
	clear(b.errs)
	b.done = make(chan struct{})
	go func() {
		defer close(b.done)
		runJobs(jobs, func(j int) {
			a := b.arenas[j]
			a.reset()
			for i := from + j*chunk; i < min(from+(j+1)*chunk, to); i++ {
				val, err := a.encode(objs[i], gvk)
				if err != nil {
					b.errs[j] = fmt.Errorf("%s %q: %w", name, key(i), err)
					return
				}
				b.vals[i-from], hashes[i] = val, store.Hash(val)
			}
		})
	}()
}

// bucket writes objs under their keys into bucket (created even when
// empty), filling hashes. Batches are pipelined: while one is laid out in
// pages and written, the next is encoded, on every core (two sets of
// arenas take turns). The keys are only read: key may return memory it
// does not own.
func (w *batchWriter) bucket(name string, objs []runtime.Object, key func(i int) []byte, gvk schema.GroupVersionKind, hashes []uint64) error {
	if err := w.c.Put(name, nil); err != nil {
		return err
	}
	if len(objs) == 0 {
		return nil
	}
	cur, next := &w.batches[0], &w.batches[1]
	cur.encode(name, objs, key, gvk, hashes, 0, min(fullBatch, len(objs)))
	for {
		<-cur.done
		more := cur.to < len(objs)
		if more {
			next.encode(name, objs, key, gvk, hashes, cur.to, min(cur.to+fullBatch, len(objs)))
		}
		err := w.write(name, cur, key)
		if err != nil || !more {
			if more {
				<-next.done
			}
			return err
		}
		cur, next = next, cur
	}
}

// write puts an encoded batch into the file; its arenas may then be
// reused.
func (w *batchWriter) write(name string, b *encodedBatch, key func(i int) []byte) error {
	for _, err := range b.errs {
		if err != nil {
			return err
		}
	}
	w.kvs = w.kvs[:0]
	for i := b.from; i < b.to; i++ {
		w.kvs = append(w.kvs, store.KV{Key: key(i), Value: b.vals[i-b.from]})
	}
	if err := w.c.Put(name, w.kvs); err != nil {
		return err
	}
	return w.c.Commit()
}
