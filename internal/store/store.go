// Package store is the embedded key-value file berth keeps a cluster in: a
// bbolt database (etcd's own storage engine) of named buckets, read whole
// into memory and written back one transaction at a time with only the keys
// that changed. It knows nothing of the cluster's types; internal/cluster
// decides the buckets and encodes the objects (docs/state.md).
package store

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// openTimeout bounds the wait for bbolt's own file lock. berth's state lock
// (internal/cluster/lock.go) already serialises commands, so a wait here
// only happens when another program holds the file.
const openTimeout = 5 * time.Second

// KV is one stored entry. Value points into the database's memory map and
// is valid only until the read that returned it finishes.
type KV struct {
	Key, Value []byte
}

// Read opens the database at path read-only and calls f with every entry of
// every bucket that want accepts (every bucket when want is nil), while the
// file is mapped; f must copy what it keeps. A missing file is
// fs.ErrNotExist.
func Read(path string, want func(bucket string) bool, f func(buckets map[string][]KV) error) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	opts := &bolt.Options{ReadOnly: true, Timeout: openTimeout}
	if want == nil {
		opts.MmapFlags = populate
	}
	db, err := bolt.Open(path, 0o600, opts)
	if err != nil {
		return openError(err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		all := map[string][]KV{}
		err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if want != nil && !want(string(name)) {
				return nil
			}
			var kvs []KV
			err := b.ForEach(func(k, v []byte) error {
				if v == nil {
					return fmt.Errorf("bucket %s holds a nested bucket %q", name, k)
				}
				kvs = append(kvs, KV{Key: k, Value: v})
				return nil
			})
			all[string(name)] = kvs
			return err
		})
		if err != nil {
			return err
		}
		return f(all)
	})
}

// openError words bbolt's complaint about a file that is not a database.
func openError(err error) error {
	if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrVersionMismatch) || errors.Is(err, berrors.ErrChecksum) {
		return fmt.Errorf("not a berth state database: %w", err)
	}
	return err
}

// Change is what one write does to one bucket: Put holds the entries to
// write (new or changed), Delete the keys to remove. Reset empties the
// bucket first.
type Change struct {
	Bucket string
	Reset  bool
	Put    []KV
	Delete [][]byte
}

// Write applies changes to the database at path in one transaction. The
// array freelist (bbolt's default) hands out pages in order, so the same
// writes make the same file: the hashmap freelist picks free spans in map
// order. bbolt
// writes the new pages, syncs them, then flips the meta page and syncs
// again, so a crash at any point leaves the previous or the new contents.
func Write(path string, changes []Change) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout})
	if err != nil {
		return openError(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return apply(tx, changes) }); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// pageSize is the database's page size, fixed when the file is created.
// Stored pods and nodes run to one or two kilobytes each: on 4 KiB pages
// most leaves hold one or two and half the file is slack; 16 KiB pages pack
// them (a 5,000-node cluster's file is about half the size) at the price of
// rewriting more bytes per changed page.
const pageSize = 16 << 10

// SyncDir makes a rename in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func apply(tx *bolt.Tx, changes []Change) error {
	for _, c := range changes {
		name := []byte(c.Bucket)
		if c.Reset && tx.Bucket(name) != nil {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		b, err := tx.CreateBucketIfNotExists(name)
		if err != nil {
			return fmt.Errorf("bucket %s: %w", c.Bucket, err)
		}
		if sortedKeys(c.Put) {
			// Keys arriving in order fill pages fully instead of splitting
			// them in half (the default suits random inserts).
			b.FillPercent = 0.9
		}
		for _, k := range c.Delete {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		for _, kv := range c.Put {
			if err := b.Put(kv.Key, kv.Value); err != nil {
				return fmt.Errorf("bucket %s key %q: %w", c.Bucket, kv.Key, err)
			}
		}
	}
	if hook := testHook; hook != nil {
		hook("before-commit")
	}
	return nil
}

func sortedKeys(kvs []KV) bool {
	for i := 1; i < len(kvs); i++ {
		if bytes.Compare(kvs[i-1].Key, kvs[i].Key) >= 0 {
			return false
		}
	}
	return true
}

// testHook, when set, is called at named points of a write (the crash test
// kills its child process there).
var testHook func(point string)

// SetTestHook installs f as the write hook; for tests only.
func SetTestHook(f func(point string)) { testHook = f }

// seed is this process's hash seed: hashes are compared only within one
// process, against what the same process loaded or saved.
var seed = maphash.MakeSeed()

// Hash is a 64-bit fingerprint of an encoded value, for telling which
// objects changed since they were loaded.
func Hash(b []byte) uint64 { return maphash.Bytes(seed, b) }
