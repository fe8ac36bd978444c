package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Creator writes a complete new database front to back: a bbolt file
// (stock bbolt opens and changes it) whose pages it lays out itself rather
// than through bbolt's transactions (docs/state.md#the-fresh-file-write).
// Each bucket's entries arrive in key order; they are packed into full leaf
// pages as they come, the branch pages above them follow when the bucket
// ends, and the root bucket, an empty freelist and the two meta pages when
// the file does. Pages go out in order through one buffer, a few megabytes
// per write call, into a temporary file next to path that Close syncs and
// renames over path, so readers (and a crash) see the old file or the whole
// new one.
//
// bbolt's own Put walked a cursor and allocated for every entry, and its
// commit wrote each page with a call of its own (24,000 calls for the
// 100,000-pod state).
type Creator struct {
	path, tmp string
	f         *os.File
	err       error // the first failure; later calls return it

	buf     []byte // pages not yet written, page first at buf[0]
	first   uint64
	next    uint64 // the next page id
	buckets []leafEntry
	done    map[string]bool

	// The bucket being written.
	bucket  string
	open    bool
	last    []byte // its last key so far, for the order check
	pending []leafEntry
	size    int // of a leaf page holding pending
	refs    []branchRef
	stage   [2][]byte // pending's bytes once the caller takes them back
}

// writeBuffer is how many bytes of pages go to the file per write call.
const writeBuffer = 4 << 20

// NewCreator starts a new database for path.
func NewCreator(path string) (*Creator, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	// Pages 0 and 1 are the meta pages, written last.
	c := &Creator{path: path, tmp: f.Name(), f: f, first: 2, next: 2, done: map[string]bool{}}
	c.buf = make([]byte, 0, writeBuffer)
	return c, nil
}

// Put adds entries to bucket, which must come in key order after the ones
// of earlier calls; the bucket is created when first named. A bucket's
// entries come in consecutive calls: naming another bucket closes it. The
// keys and values must stay unchanged until Commit.
func (c *Creator) Put(bucket string, kvs []KV) error {
	if c.err != nil {
		return c.err
	}
	if !c.open || bucket != c.bucket {
		if c.open {
			c.finishBucket()
		}
		if c.done[bucket] {
			return c.fail(fmt.Errorf("bucket %s: written twice", bucket))
		}
		c.bucket, c.open, c.last = bucket, true, c.last[:0]
	}
	for _, kv := range kvs {
		// Keys are never empty, so an empty last means the first one.
		if len(kv.Key) == 0 {
			return c.fail(fmt.Errorf("bucket %s: empty key", bucket))
		}
		if len(c.last) > 0 && bytes.Compare(c.last, kv.Key) >= 0 {
			return c.fail(fmt.Errorf("bucket %s key %q: not after %q", bucket, kv.Key, c.last))
		}
		c.last = append(c.last[:0], kv.Key...)
		c.add(leafEntry{key: kv.Key, value: kv.Value})
	}
	return c.err
}

// Commit lets the caller reuse the memory of the keys and values put so
// far: the few not yet laid out in a page are copied.
func (c *Creator) Commit() error {
	if c.err != nil {
		return c.err
	}
	n := 0
	for _, e := range c.pending {
		n += len(e.key) + len(e.value)
	}
	// pending may point into stage[0]: copy into the other one.
	s := slices.Grow(c.stage[1][:0], n)
	for i, e := range c.pending {
		at := len(s)
		s = append(s, e.key...)
		s = append(s, e.value...)
		c.pending[i].key = s[at : at+len(e.key) : at+len(e.key)]
		c.pending[i].value = s[at+len(e.key) : len(s) : len(s)]
	}
	c.stage[0], c.stage[1] = s, c.stage[0]
	return nil
}

// Close ends the last bucket, writes the root bucket, the freelist and the
// meta pages, syncs the file and renames it over path.
func (c *Creator) Close() error {
	if hook := testHook; hook != nil {
		hook("before-commit")
	}
	if c.err == nil {
		c.finish()
	}
	err := c.err
	if err == nil {
		err = c.f.Sync()
	}
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(c.tmp, c.path)
	}
	if err != nil {
		os.Remove(c.tmp)
		return err
	}
	return SyncDir(filepath.Dir(c.path))
}

// Abort drops the new file; path is untouched.
func (c *Creator) Abort() {
	c.f.Close()
	os.Remove(c.tmp)
}

func (c *Creator) fail(err error) error {
	if c.err == nil {
		c.err = err
	}
	return c.err
}

// add appends e to the open leaf, first writing the leaf out when e would
// not fit; an entry larger than a page gets a leaf of its own, spanning as
// many pages as it needs (bbolt's overflow pages).
func (c *Creator) add(e leafEntry) {
	if len(c.pending) == 0 {
		c.size = pageHeaderSize
	}
	n := elementSize + len(e.key) + len(e.value)
	if len(c.pending) > 0 && c.size+n > pageSize {
		c.closeLeaf()
		c.size = pageHeaderSize
	}
	c.pending = append(c.pending, e)
	c.size += n
	if c.size > pageSize {
		c.closeLeaf()
	}
}

// closeLeaf writes the pending entries as a leaf page.
func (c *Creator) closeLeaf() {
	size := leafSize(c.pending)
	n := (size + pageSize - 1) / pageSize
	p, id := c.alloc(n)
	writeLeaf(p, id, n-1, c.pending)
	var first []byte
	if len(c.pending) > 0 {
		first = bytes.Clone(c.pending[0].key)
	}
	c.refs = append(c.refs, branchRef{key: first, id: id})
	clear(c.pending)
	c.pending = c.pending[:0]
}

// finishBucket writes the rest of the open bucket and files its value for
// the root. A bucket small enough is kept inline in its value, as bbolt
// keeps one of at most a quarter page.
func (c *Creator) finishBucket() {
	var value []byte
	if len(c.refs) == 0 && leafSize(c.pending) <= pageSize/4 {
		value = bucketValue(0, c.pending)
	} else {
		if len(c.pending) > 0 {
			c.closeLeaf()
		}
		value = bucketValue(c.branches(), nil)
	}
	c.buckets = append(c.buckets, leafEntry{key: []byte(c.bucket), value: value, flags: bucketLeafFlag})
	c.done[c.bucket] = true
	c.open = false
	clear(c.pending)
	c.pending, c.refs = c.pending[:0], c.refs[:0]
}

// branches writes the branch pages above the leaves in refs, level by
// level, and returns the root page.
func (c *Creator) branches() uint64 {
	refs := c.refs
	for len(refs) > 1 {
		var up []branchRef
		for i := 0; i < len(refs); {
			size, j := pageHeaderSize, i
			for j < len(refs) && (j == i || size+elementSize+len(refs[j].key) <= pageSize) {
				size += elementSize + len(refs[j].key)
				j++
			}
			// No branch page of one child at the end of a level: bbolt
			// keeps two or more.
			if len(refs)-j == 1 && j-i > 2 {
				size -= elementSize + len(refs[j-1].key)
				j--
			}
			p, id := c.alloc((size + pageSize - 1) / pageSize)
			writeBranch(p, id, refs[i:j])
			up = append(up, branchRef{key: refs[i].key, id: id})
			i = j
		}
		refs = up
	}
	return refs[0].id
}

// finish writes the root bucket (never inline), the freelist (empty: the
// file has no free page) and the meta pages.
func (c *Creator) finish() {
	if c.open {
		c.finishBucket()
	}
	slices.SortFunc(c.buckets, func(a, b leafEntry) int { return bytes.Compare(a.key, b.key) })
	for _, b := range c.buckets {
		c.add(b)
	}
	c.closeLeaf()
	root := c.branches()
	p, freelist := c.alloc(1)
	putPageHeader(p, freelist, freelistPageFlag, 0, 0)
	clear(p[pageHeaderSize:])
	c.flush()
	if c.err != nil {
		return
	}
	// Both meta pages name the new tree; bbolt uses the one of the higher
	// transaction id and its next write replaces the other.
	meta := make([]byte, 2*pageSize)
	writeMeta(meta[:pageSize], 0, root, freelist, c.next, 0)
	writeMeta(meta[pageSize:], 1, root, freelist, c.next, 1)
	if _, err := c.f.WriteAt(meta, 0); err != nil {
		c.fail(err)
	}
}

// alloc returns the next n pages, in the write buffer.
func (c *Creator) alloc(n int) ([]byte, uint64) {
	size := n * pageSize
	if len(c.buf)+size > cap(c.buf) {
		c.flush()
		if size > cap(c.buf) {
			c.buf = make([]byte, 0, size)
		}
	}
	at := len(c.buf)
	c.buf = c.buf[:at+size]
	id := c.next
	c.next += uint64(n)
	return c.buf[at : at+size], id
}

// flush writes the buffered pages.
func (c *Creator) flush() {
	if len(c.buf) > 0 && c.err == nil {
		if _, err := c.f.WriteAt(c.buf, int64(c.first)*pageSize); err != nil {
			c.fail(err)
		}
	}
	c.buf, c.first = c.buf[:0], c.next
}

// Create writes a complete new database holding changes to path (Reset
// and Delete mean nothing in a new file; entries are sorted by key).
func Create(path string, changes []Change) error {
	c, err := NewCreator(path)
	if err != nil {
		return err
	}
	byBucket := map[string][]KV{}
	var names []string
	for _, ch := range changes {
		if _, ok := byBucket[ch.Bucket]; !ok {
			names = append(names, ch.Bucket)
		}
		byBucket[ch.Bucket] = append(byBucket[ch.Bucket], ch.Put...)
	}
	for _, name := range names {
		kvs := byBucket[name]
		slices.SortStableFunc(kvs, func(a, b KV) int { return bytes.Compare(a.Key, b.Key) })
		if err := c.Put(name, kvs); err != nil {
			c.Abort()
			return err
		}
	}
	return c.Close()
}
