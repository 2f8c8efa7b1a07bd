package mvcc

import (
	"encoding/binary"
	"fmt"
	"io"
)

// The b-tree pages of a bbolt file (go.etcd.io/bbolt internal/common), as
// checkPages reads them: a 16-byte header (the page's ID, its flags, a
// count of elements and of overflow pages after it), then count 16-byte
// elements. A branch element is the position of its key relative to the
// element, the key's size and a child page's ID; a leaf element is its
// flags, the position of its key, and the sizes of its key and of the
// value after it. A leaf element flagged as a bucket has for value the
// bucket's root page and sequence, and when the root is 0 the bucket's
// one leaf page itself (an inline bucket).
const (
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01
	pageElementSize  = 16
	bucketHeaderSize = 16
	// noFreelist is the meta's freelist page when the freelist is not
	// written, as httpkv's stores (NoFreelistSync) and etcd's have it.
	noFreelist = ^uint64(0)
	// freelistCountOverflow in a freelist page's count says that the
	// count is the first 8 bytes after the header.
	freelistCountOverflow = 0xFFFF
	// maxTreeDepth bounds the levels of one bucket's b-tree and
	// maxBucketDepth the nesting of buckets. bbolt keeps at least two
	// children under every branch page but the root, so no file has a
	// tree of more than about log2(pages) levels; a deeper chain is made
	// to exhaust bbolt's recursion.
	maxTreeDepth   = 64
	maxBucketDepth = 64
)

// checkPages walks every page the meta m reaches in the bbolt file f, as
// bbolt itself would walk them (to rebuild its freelist when it opens the
// file for writing, to check it, to read a bucket), and refuses a file
// where bbolt would panic or read outside a page: a page whose header
// names another ID or a type its parent does not expect, a page or an
// overflow run past the high water mark, a page reached twice (a cycle
// would never end), an element, key or value past the end of its page,
// a branch page without children, a bucket value too short for its
// header, a tree deeper than maxTreeDepth, a freelist that frees the
// meta pages or pages in use. It reads with f.ReadAt, never through a
// mapping, so a bad offset is an error and not a fault.
//
// It checks the structure only: the order of keys, and what the keys and
// values mean, are left to bbolt's Tx.Check and to the store's restore.
func checkPages(f io.ReaderAt, m boltMeta) error {
	c := &pageChecker{f: f, pageSize: uint64(m.pageSize), pages: m.pages, seen: make([]uint64, (m.pages+63)/64)}
	if m.pages < 2 {
		return fmt.Errorf("meta says %d pages, fewer than its own two", m.pages)
	}
	c.mark(0)
	c.mark(1)
	if err := c.tree(m.root, 0); err != nil {
		return err
	}
	if m.freelist != noFreelist {
		if err := c.freelist(m.freelist); err != nil {
			return fmt.Errorf("freelist: %w", err)
		}
	}
	return nil
}

// pageChecker holds what checkPages has seen.
type pageChecker struct {
	f        io.ReaderAt
	pageSize uint64
	pages    uint64   // the high water mark: no page at or above it exists
	seen     []uint64 // a bit per page reached
	buf      []byte
}

// pageHeader is a page's header.
type pageHeader struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
}

func decodePageHeader(b []byte) pageHeader {
	le := binary.NativeEndian
	return pageHeader{id: le.Uint64(b), flags: le.Uint16(b[8:]), count: le.Uint16(b[10:]), overflow: le.Uint32(b[12:])}
}

// mark notes page id reached, and reports whether it had been already.
func (c *pageChecker) mark(id uint64) (again bool) {
	w, bit := id/64, uint64(1)<<(id%64)
	again = c.seen[w]&bit != 0
	c.seen[w] |= bit
	return again
}

// read returns n bytes of the file at off, in a buffer reused by the next
// read.
func (c *pageChecker) read(off, n uint64) ([]byte, error) {
	if uint64(cap(c.buf)) < n {
		c.buf = make([]byte, n)
	}
	b := c.buf[:n]
	if _, err := c.f.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("read %d bytes at %d: %w", n, off, err)
	}
	return b, nil
}

// page reads the header and the elements of page id, which must be a
// page of one of the types in want, wholly below the high water mark and
// not reached before; it marks the page and its overflow pages. It
// returns the header, the page's bytes up to the end of its elements
// (count elements of elemSize bytes), and the page's size with its
// overflow pages.
func (c *pageChecker) page(id uint64, want uint16, elemSize uint64) (pageHeader, []byte, uint64, error) {
	if id < 2 || id >= c.pages {
		return pageHeader{}, nil, 0, fmt.Errorf("page %d: outside [2, %d)", id, c.pages)
	}
	b, err := c.read(id*c.pageSize, c.pageSize)
	if err != nil {
		return pageHeader{}, nil, 0, fmt.Errorf("page %d: %w", id, err)
	}
	h := decodePageHeader(b)
	switch {
	case h.id != id:
		return h, nil, 0, fmt.Errorf("page %d: its header says page %d", id, h.id)
	case h.flags&want == 0 || h.flags&(h.flags-1) != 0:
		return h, nil, 0, fmt.Errorf("page %d: flags %#x, want one of %#x", id, h.flags, want)
	case uint64(h.overflow) >= c.pages-id:
		return h, nil, 0, fmt.Errorf("page %d: %d overflow pages run past the last page, %d", id, h.overflow, c.pages-1)
	}
	for p := id; p <= id+uint64(h.overflow); p++ {
		if c.mark(p) {
			return h, nil, 0, fmt.Errorf("page %d: reached twice", p)
		}
	}
	size := (uint64(h.overflow) + 1) * c.pageSize
	end := uint64(pageHeaderSize) + uint64(h.count)*elemSize
	if end > size {
		return h, nil, 0, fmt.Errorf("page %d: %d elements do not fit its %d bytes", id, h.count, size)
	}
	if end > c.pageSize {
		if b, err = c.read(id*c.pageSize, end); err != nil {
			return h, nil, 0, fmt.Errorf("page %d: %w", id, err)
		}
	}
	return h, b[:end], size, nil
}

// tree checks the b-tree of the bucket whose root is page root, nested
// in depth buckets, and the buckets inside it.
func (c *pageChecker) tree(root uint64, depth int) error {
	if depth > maxBucketDepth {
		return fmt.Errorf("buckets nested more than %d deep", maxBucketDepth)
	}
	type level struct {
		id    uint64
		depth int
	}
	todo := []level{{root, 0}}
	for len(todo) > 0 {
		l := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if l.depth >= maxTreeDepth {
			return fmt.Errorf("page %d: more than %d levels of pages", l.id, maxTreeDepth)
		}
		h, b, size, err := c.page(l.id, branchPageFlag|leafPageFlag, pageElementSize)
		if err != nil {
			return err
		}
		if h.flags == branchPageFlag {
			if h.count == 0 {
				return fmt.Errorf("page %d: a branch page without children", l.id)
			}
			le := binary.NativeEndian
			for i := range uint64(h.count) {
				e := b[pageHeaderSize+i*pageElementSize:]
				pos, ksize := uint64(le.Uint32(e)), uint64(le.Uint32(e[4:]))
				if err := fits(l.id, i, pageHeaderSize+i*pageElementSize+pos+ksize, size); err != nil {
					return err
				}
				todo = append(todo, level{le.Uint64(e[8:]), l.depth + 1})
			}
			continue
		}
		buckets, err := leafBuckets(l.id, b, size)
		if err != nil {
			return err
		}
		for _, off := range buckets {
			if err := c.bucket(l.id, l.id*c.pageSize+off.at, off.size, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// bucketValue is where a bucket's value lies, from the start of its page.
type bucketValue struct{ at, size uint64 }

// leafBuckets checks that every key and value of the leaf page id, whose
// bytes up to the end of its elements are b, lies within its size bytes,
// and returns where the values of its buckets are.
func leafBuckets(id uint64, b []byte, size uint64) ([]bucketValue, error) {
	h := decodePageHeader(b)
	le := binary.NativeEndian
	var buckets []bucketValue
	for i := range uint64(h.count) {
		at := pageHeaderSize + i*pageElementSize
		e := b[at:]
		flags, pos := le.Uint32(e), uint64(le.Uint32(e[4:]))
		ksize, vsize := uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
		if err := fits(id, i, at+pos+ksize+vsize, size); err != nil {
			return nil, err
		}
		if flags&bucketLeafFlag != 0 {
			buckets = append(buckets, bucketValue{at + pos + ksize, vsize})
		}
	}
	return buckets, nil
}

// bucket checks the bucket whose value is size bytes at off in the file,
// in a leaf of page parent: its root page's tree, or its inline page.
func (c *pageChecker) bucket(parent, off, size uint64, depth int) error {
	if size < bucketHeaderSize {
		return fmt.Errorf("page %d: a bucket value of %d bytes, shorter than its %d-byte header", parent, size, bucketHeaderSize)
	}
	v, err := c.read(off, size)
	if err != nil {
		return fmt.Errorf("page %d: %w", parent, err)
	}
	if root := binary.NativeEndian.Uint64(v); root != 0 {
		return c.tree(root, depth+1)
	}
	// An inline bucket: its one leaf page follows the header, and bbolt
	// inlines only buckets without buckets inside.
	inline := v[bucketHeaderSize:]
	if len(inline) < pageHeaderSize {
		return fmt.Errorf("page %d: an inline bucket of %d bytes, shorter than a page header", parent, len(inline))
	}
	h := decodePageHeader(inline)
	n := uint64(len(inline))
	if h.flags != leafPageFlag {
		return fmt.Errorf("page %d: an inline bucket with flags %#x, not a leaf", parent, h.flags)
	}
	if pageHeaderSize+uint64(h.count)*pageElementSize > n {
		return fmt.Errorf("page %d: an inline bucket's %d elements do not fit its %d bytes", parent, h.count, n)
	}
	buckets, err := leafBuckets(parent, inline, n)
	if err != nil {
		return err
	}
	if len(buckets) > 0 {
		return fmt.Errorf("page %d: a bucket inside an inline bucket", parent)
	}
	return nil
}

// fits says that element i of page id ends at end, beyond its size bytes.
func fits(id, i, end, size uint64) error {
	if end > size {
		return fmt.Errorf("page %d: element %d ends at byte %d, past the page's %d", id, i, end, size)
	}
	return nil
}

// freelist checks the freelist page id: the IDs it frees must be pages
// below the high water mark that no bucket reaches.
func (c *pageChecker) freelist(id uint64) error {
	// Its elements are the IDs, 8 bytes each; a count of
	// freelistCountOverflow is the first of them.
	h, _, size, err := c.page(id, freelistPageFlag, 8)
	if err != nil {
		return err
	}
	count, at := uint64(h.count), uint64(pageHeaderSize)
	if h.count == freelistCountOverflow {
		b, err := c.read(id*c.pageSize+at, 8)
		if err != nil {
			return fmt.Errorf("page %d: %w", id, err)
		}
		count, at = binary.NativeEndian.Uint64(b), at+8
	}
	if count > (size-at)/8 {
		return fmt.Errorf("page %d: %d free page IDs do not fit its %d bytes", id, count, size)
	}
	b, err := c.read(id*c.pageSize+at, count*8)
	if err != nil {
		return fmt.Errorf("page %d: %w", id, err)
	}
	for i := range count {
		free := binary.NativeEndian.Uint64(b[i*8:])
		if free < 2 || free >= c.pages || c.seen[free/64]&(1<<(free%64)) != 0 {
			return fmt.Errorf("page %d: frees page %d, which is a meta page, in use or past the last page", id, free)
		}
	}
	return nil
}
