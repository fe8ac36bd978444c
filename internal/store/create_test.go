package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// contents is a database's buckets, each a map of key to value.
type contents map[string]map[string]string

// randomContents makes buckets covering the shapes the page writer lays
// out differently: empty, inline (up to a quarter page), one leaf, values
// larger than a page (overflow pages), enough leaves for two branch
// levels, and so many small buckets that the root bucket needs branches.
func randomContents(r *rand.Rand) contents {
	c := contents{"empty": {}}
	value := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return string(b)
	}
	fill := func(name string, n int, size func() int) {
		m := map[string]string{}
		for len(m) < n {
			m[fmt.Sprintf("k%08d", r.IntN(1<<30))] = value(size())
		}
		c[name] = m
	}
	fill("inline", 3, func() int { return 100 })
	fill("inline-max", 1, func() int { return pageSize/4 - pageHeaderSize - elementSize - 9 })
	fill("just-over-inline", 1, func() int { return pageSize/4 - pageHeaderSize - elementSize - 8 })
	fill("one-leaf", 20, func() int { return 300 })
	fill("overflow", 40, func() int { return []int{10, 5000, pageSize - 40, pageSize, 3*pageSize + 7}[r.IntN(5)] })
	fill("deep", 4000, func() int { return 3000 + r.IntN(2000) })
	for i := 0; i < 40; i++ {
		fill(fmt.Sprintf("small-%03d", i), 1, func() int { return 3000 })
	}
	return c
}

// create writes c with a Creator in batches of batch entries, reusing
// one buffer for the values of a batch as the save does.
func create(t *testing.T, path string, c contents, batch int) {
	t.Helper()
	w, err := NewCreator(path)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(c))
	for name := range c {
		names = append(names, name)
	}
	// Not in name order: the root bucket sorts them.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	var buf []byte
	for _, name := range names {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range c[name] {
				if !yield(k) {
					return
				}
			}
		})
		if err := w.Put(name, nil); err != nil {
			t.Fatal(err)
		}
		for from := 0; from < len(keys); from += batch {
			buf = buf[:0]
			var kvs []KV
			for _, k := range keys[from:min(from+batch, len(keys))] {
				buf = append(buf, c[name][k]...)
				kvs = append(kvs, KV{Key: []byte(k)})
			}
			off := 0
			for i, k := range keys[from:min(from+batch, len(keys))] {
				kvs[i].Value = buf[off : off+len(c[name][k])]
				off += len(c[name][k])
			}
			if err := w.Put(name, kvs); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			// The caller may reuse the values now.
			for i := range buf {
				buf[i] = '#'
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// check opens path with stock bbolt, runs its consistency check and
// compares every bucket and entry with want; a fresh file must have the
// shapes randomContents aims at.
func check(t *testing.T, path string, want contents, fresh bool) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			t.Errorf("bbolt check: %v", err)
		}
		got := contents{}
		err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			m := map[string]string{}
			got[string(name)] = m
			return b.ForEach(func(k, v []byte) error {
				m[string(k)] = string(v)
				return nil
			})
		})
		if err != nil {
			return err
		}
		if st := tx.Bucket([]byte("deep")).Stats(); fresh && (st.Depth < 3 || st.LeafOverflowN > 0) {
			t.Errorf("bucket deep: %+v, want two branch levels at least and no overflow", st)
		}
		if st := tx.Bucket([]byte("overflow")).Stats(); fresh && st.LeafOverflowN == 0 {
			t.Errorf("bucket overflow has no overflow pages: %+v", st)
		}
		if len(got) != len(want) {
			t.Errorf("%d buckets, want %d", len(got), len(want))
		}
		for name, m := range want {
			g, ok := got[name]
			if !ok {
				t.Errorf("bucket %s missing", name)
				continue
			}
			if len(g) != len(m) {
				t.Errorf("bucket %s: %d entries, want %d", name, len(g), len(m))
			}
			for k, v := range m {
				if g[k] != v {
					t.Errorf("bucket %s key %s: value of %d bytes differs from the %d written", name, k, len(g[k]), len(v))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCreatorWritesABboltFile: stock bbolt opens the file, finds it
// consistent and reads back every entry; then changes it in ordinary
// transactions (updates, deletes, new keys, a dropped and a new bucket)
// twice, the second reusing the pages the first freed, checking it each
// time.
func TestCreatorWritesABboltFile(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	want := randomContents(r)
	path := filepath.Join(t.TempDir(), "state.db")
	create(t, path, want, 100)
	check(t, path, want, true)

	for round := 0; round < 2; round++ {
		var changes []Change
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range want {
				if !yield(k) {
					return
				}
			}
		}) {
			ch := Change{Bucket: name}
			i := 0
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range want[name] {
					if !yield(k) {
						return
					}
				}
			}) {
				switch i++; i % 3 {
				case 0:
					ch.Delete = append(ch.Delete, []byte(k))
					delete(want[name], k)
				case 1:
					v := fmt.Sprint(round, k)
					ch.Put = append(ch.Put, KV{Key: []byte(k), Value: []byte(v)})
					want[name][k] = v
				}
			}
			changes = append(changes, ch)
		}
		changes = append(changes, Change{Bucket: "deep", Put: []KV{{Key: []byte("zz-new"), Value: []byte("new")}}},
			Change{Bucket: "inline", Reset: true}, Change{Bucket: fmt.Sprint("added-", round), Put: []KV{{Key: []byte("a"), Value: []byte("b")}}})
		want["deep"]["zz-new"] = "new"
		want["inline"] = map[string]string{}
		want[fmt.Sprint("added-", round)] = map[string]string{"a": "b"}
		if err := Write(path, changes); err != nil {
			t.Fatal(err)
		}
		check(t, path, want, false)
	}
}

// TestCreatorReadBack: Read (the load's path) sees the entries in key
// order, whatever the batches.
func TestCreatorReadBack(t *testing.T) {
	want := contents{"b": {}, "a": {}}
	for i := 0; i < 2000; i++ {
		want["a"][fmt.Sprintf("%05d", i)] = fmt.Sprint(i)
		want["b"][fmt.Sprintf("%05d", i)] = string(bytes.Repeat([]byte{byte(i)}, i))
	}
	for _, batch := range []int{1, 7, 5000} {
		path := filepath.Join(t.TempDir(), "state.db")
		create(t, path, want, batch)
		err := Read(path, nil, func(b map[string][]KV) error {
			for name, m := range want {
				kvs := b[name]
				if len(kvs) != len(m) {
					t.Fatalf("batch %d bucket %s: %d entries, want %d", batch, name, len(kvs), len(m))
				}
				for i, kv := range kvs {
					if k := fmt.Sprintf("%05d", i); string(kv.Key) != k || string(kv.Value) != m[k] {
						t.Fatalf("batch %d bucket %s entry %d: key %q", batch, name, i, kv.Key)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestCreatorRefusesDisorder: keys out of order, and a bucket resumed
// after another, fail instead of making a broken tree.
func TestCreatorRefusesDisorder(t *testing.T) {
	for name, puts := range map[string][]struct {
		bucket string
		key    string
	}{
		"descending": {{"a", "2"}, {"a", "1"}},
		"duplicate":  {{"a", "1"}, {"a", "1"}},
		"resumed":    {{"a", "1"}, {"b", "1"}, {"a", "2"}},
		"empty key":  {{"a", ""}},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := NewCreator(filepath.Join(t.TempDir(), "state.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Abort()
			for _, p := range puts {
				err = c.Put(p.bucket, []KV{{Key: []byte(p.key), Value: []byte("v")}})
			}
			if err == nil {
				t.Error("no error")
			}
		})
	}
}
