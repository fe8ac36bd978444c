package store

import (
	"encoding/binary"
	"hash/fnv"
)

// The bbolt file format, as far as a new file written front to back needs
// it (docs/state.md#the-fresh-file-write). Every structure is bbolt's Go
// struct laid out in the machine's byte order, as bbolt maps it:
//
//	page header  id uint64, flags uint16, count uint16, overflow uint32
//	leaf element flags uint32, pos uint32, ksize uint32, vsize uint32
//	branch elem  pos uint32, ksize uint32, pgid uint64
//	bucket       root pgid uint64, sequence uint64 (an inline bucket's
//	             value continues with its one leaf page)
//	meta         magic, version, pageSize, flags uint32; root bucket;
//	             freelist, pgid, txid uint64; checksum uint64 (FNV-64a of
//	             the fields before it)
//
// pos is the distance from the element to its key; the value follows the
// key. A page's elements come first, then their keys and values in order.
const (
	pageHeaderSize = 16
	elementSize    = 16 // leaf and branch elements alike
	bucketHeader   = 16
	metaSize       = 64

	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	metaPageFlag     = 0x04
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01

	boltMagic   = 0xED0CDAED
	boltVersion = 2
)

var ne = binary.NativeEndian

func putPageHeader(p []byte, id uint64, flags uint16, count int, overflow int) {
	ne.PutUint64(p[0:], id)
	ne.PutUint16(p[8:], flags)
	ne.PutUint16(p[10:], uint16(count))
	ne.PutUint32(p[12:], uint32(overflow))
}

// leafEntry is one element of a leaf: a key and its value, or a bucket's
// name and header (flags bucketLeafFlag).
type leafEntry struct {
	key, value []byte
	flags      uint32
}

// leafSize is the bytes a leaf page of entries takes, header included.
func leafSize(entries []leafEntry) int {
	n := pageHeaderSize
	for _, e := range entries {
		n += elementSize + len(e.key) + len(e.value)
	}
	return n
}

// writeLeaf lays entries out as a leaf page in p (cleared past the data).
func writeLeaf(p []byte, id uint64, overflow int, entries []leafEntry) {
	putPageHeader(p, id, leafPageFlag, len(entries), overflow)
	off := pageHeaderSize + elementSize*len(entries)
	for i, e := range entries {
		el := p[pageHeaderSize+elementSize*i:]
		ne.PutUint32(el[0:], e.flags)
		ne.PutUint32(el[4:], uint32(off-(pageHeaderSize+elementSize*i)))
		ne.PutUint32(el[8:], uint32(len(e.key)))
		ne.PutUint32(el[12:], uint32(len(e.value)))
		off += copy(p[off:], e.key)
		off += copy(p[off:], e.value)
	}
	clear(p[off:])
}

// branchRef is a page a branch points at, under its first key.
type branchRef struct {
	key []byte
	id  uint64
}

// writeBranch lays refs out as a branch page in p.
func writeBranch(p []byte, id uint64, refs []branchRef) {
	putPageHeader(p, id, branchPageFlag, len(refs), 0)
	off := pageHeaderSize + elementSize*len(refs)
	for i, r := range refs {
		el := p[pageHeaderSize+elementSize*i:]
		ne.PutUint32(el[0:], uint32(off-(pageHeaderSize+elementSize*i)))
		ne.PutUint32(el[4:], uint32(len(r.key)))
		ne.PutUint64(el[8:], r.id)
		off += copy(p[off:], r.key)
	}
	clear(p[off:])
}

// bucketValue is the value under a bucket's name in its parent: the header,
// then for an inline bucket (root 0) its leaf page.
func bucketValue(root uint64, inline []leafEntry) []byte {
	n := bucketHeader
	if root == 0 {
		n += leafSize(inline)
	}
	v := make([]byte, n)
	ne.PutUint64(v[0:], root)
	if root == 0 {
		writeLeaf(v[bucketHeader:], 0, 0, inline)
	}
	return v
}

// writeMeta lays out meta page id (0 or 1) of a file whose root bucket is
// at root, freelist at freelist, and pages below pgid.
func writeMeta(p []byte, id uint64, root, freelist, pgid, txid uint64) {
	clear(p)
	putPageHeader(p, id, metaPageFlag, 0, 0)
	m := p[pageHeaderSize : pageHeaderSize+metaSize]
	ne.PutUint32(m[0:], boltMagic)
	ne.PutUint32(m[4:], boltVersion)
	ne.PutUint32(m[8:], pageSize)
	ne.PutUint32(m[12:], 0)
	ne.PutUint64(m[16:], root)
	ne.PutUint64(m[24:], 0)
	ne.PutUint64(m[32:], freelist)
	ne.PutUint64(m[40:], pgid)
	ne.PutUint64(m[48:], txid)
	h := fnv.New64a()
	h.Write(m[:56])
	ne.PutUint64(m[56:], h.Sum64())
}
