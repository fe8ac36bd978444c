package store

import (
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// Creator writes a complete new database in batches: entries go into a
// temporary file next to path, one transaction per batch, and Close syncs
// it once and renames it over path, so readers (and a crash) see the old
// file or the whole new one. Writing in batches keeps what is in memory at
// once small (the encoded entries of one batch and bbolt's pages for them)
// where one transaction for a 100,000-pod state held every encoded object
// and every page at once (docs/state.md#speed).
type Creator struct {
	path, tmp string
	db        *bolt.DB
	tx        *bolt.Tx
	buckets   map[string]*bolt.Bucket
}

// createMmapSize is the address space mapped for a new file up front: bbolt
// remaps when the file outgrows its map, copying every node it holds.
// Mapping is only address space; pages are touched as they are written.
const createMmapSize = 1 << 30

// NewCreator starts a new database for path.
func NewCreator(path string) (*Creator, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	c := &Creator{path: path, tmp: f.Name()}
	f.Close()
	c.db, err = bolt.Open(c.tmp, 0o600, &bolt.Options{Timeout: openTimeout, InitialMmapSize: createMmapSize, PageSize: pageSize, NoGrowSync: true})
	if err != nil {
		os.Remove(c.tmp)
		return nil, err
	}
	// Nothing reads the temporary file before Close syncs it whole.
	c.db.NoSync = true
	return c, nil
}

// Put adds entries to bucket, in key order, in the current batch; the
// bucket is created when first named. The values must stay unchanged until
// Commit.
func (c *Creator) Put(bucket string, kvs []KV) error {
	if c.tx == nil {
		tx, err := c.db.Begin(true)
		if err != nil {
			return err
		}
		c.tx, c.buckets = tx, map[string]*bolt.Bucket{}
	}
	b := c.buckets[bucket]
	if b == nil {
		var err error
		if b, err = c.tx.CreateBucketIfNotExists([]byte(bucket)); err != nil {
			return fmt.Errorf("bucket %s: %w", bucket, err)
		}
		// Keys arrive in order into a new file: pages are filled to the
		// brim rather than split in half (bbolt's default, for random
		// inserts) or left a tenth empty. A later save that grows a full
		// page splits it then, as it would split any page it outgrows;
		// the event log, the largest bucket, is only appended to.
		b.FillPercent = 1.0
		c.buckets[bucket] = b
	}
	for _, kv := range kvs {
		if err := b.Put(kv.Key, kv.Value); err != nil {
			return fmt.Errorf("bucket %s key %q: %w", bucket, kv.Key, err)
		}
	}
	return nil
}

// Commit writes the current batch to the file; the memory of its values
// may then be reused.
func (c *Creator) Commit() error {
	if c.tx == nil {
		return nil
	}
	tx := c.tx
	c.tx, c.buckets = nil, nil
	return tx.Commit()
}

// Close commits the last batch, syncs the file and renames it over path.
func (c *Creator) Close() error {
	if hook := testHook; hook != nil {
		hook("before-commit")
	}
	err := c.Commit()
	if err == nil {
		err = c.db.Sync()
	}
	if cerr := c.db.Close(); err == nil {
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
	if c.tx != nil {
		c.tx.Rollback()
	}
	c.db.Close()
	os.Remove(c.tmp)
}

// Create writes a complete new database holding changes to path (Reset
// and Delete mean nothing in a new file), in one batch.
func Create(path string, changes []Change) error {
	c, err := NewCreator(path)
	if err != nil {
		return err
	}
	for _, ch := range changes {
		if err := c.Put(ch.Bucket, ch.Put); err != nil {
			c.Abort()
			return err
		}
	}
	return c.Close()
}
