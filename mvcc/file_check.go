package mvcc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
)

// bbolt trusts its file: it maps it and reads every page the meta counts,
// so a file cut short (a bad copy, a full disk, a careless truncate)
// makes it fault with SIGBUS past the end; it follows page IDs and
// element offsets as they are, so a page that is not what its parent
// says makes it panic, on a goroutine of its own when it opens a file
// for writing (where no recover can reach), or read outside the file.
// And it waits, then says only "timeout", when another process holds the
// file. checkFile reads the meta pages and the pages of every bucket
// itself first, with reads it bounds, and asks who holds the lock, so
// that a bad data file is refused with what is wrong, and untouched.

// Layout of a bbolt file's meta pages (go.etcd.io/bbolt
// internal/common): pages 0 and 1 each hold a 16-byte page header, then
// the meta, in the machine's byte order.
const (
	pageHeaderSize = 16
	metaMagic      = 0xED0CDAED
	metaVersion    = 2
	// metaSize is the meta up to and including its checksum: magic,
	// version, page size, flags (4 bytes each), root bucket (16),
	// freelist page, page count, txid and checksum (8 each).
	metaSize = 64
	// metaSummed is the part of the meta its checksum covers.
	metaSummed = metaSize - 8
)

// boltMeta is what checkFile needs of a meta page.
type boltMeta struct {
	pageSize uint32
	root     uint64 // the page of the root bucket, which holds the others
	freelist uint64 // the freelist's page, or noFreelist
	pages    uint64 // the high water mark: pages in use, the meta pages included
	txid     uint64
}

// Page sizes checkFile accepts. bbolt writes pages of the system's page
// size (4 KiB on most systems, 16 or 64 KiB on some), and addresses page
// n at n times the size its first valid meta page gives: a size it never
// writes is a crafted one.
const (
	minPageSize = 1 << 10
	maxPageSize = 1 << 16
)

// decodeMeta reads the meta of the page at the start of b, or says why it
// is not one.
func decodeMeta(b []byte) (boltMeta, error) {
	if len(b) < pageHeaderSize+metaSize {
		return boltMeta{}, errors.New("too short for a meta page")
	}
	m := b[pageHeaderSize : pageHeaderSize+metaSize]
	le := binary.NativeEndian
	if le.Uint32(m[0:]) != metaMagic {
		return boltMeta{}, errors.New("no bbolt magic number")
	}
	if v := le.Uint32(m[4:]); v != metaVersion {
		return boltMeta{}, fmt.Errorf("bbolt file version %d, want %d", v, metaVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaSummed])
	if h.Sum64() != le.Uint64(m[metaSummed:]) {
		return boltMeta{}, errors.New("meta checksum mismatch")
	}
	return boltMeta{
		pageSize: le.Uint32(m[8:]),
		root:     le.Uint64(m[16:]),
		freelist: le.Uint64(m[32:]),
		pages:    le.Uint64(m[40:]),
		txid:     le.Uint64(m[48:]),
	}, nil
}

// readMeta returns the meta bbolt would use: the valid one of the two
// with the highest txid. Like bbolt, it takes the page size from the
// first meta page, or when that is damaged from the first valid meta
// found at any page size bbolt supports, and reads the second meta page
// one page further. The meta used must give that same page size, within
// [minPageSize, maxPageSize].
func readMeta(f *os.File, size int64) (boltMeta, error) {
	var buf [pageHeaderSize + metaSize]byte
	read := func(off int64) (boltMeta, error) {
		if _, err := f.ReadAt(buf[:], off); err != nil {
			if errors.Is(err, io.EOF) {
				return boltMeta{}, errors.New("too short for a meta page")
			}
			return boltMeta{}, err
		}
		return decodeMeta(buf[:])
	}
	first, err0 := read(0)
	pageSize := first.pageSize
	if err0 != nil {
		for i := range 15 { // 1 KiB to 16 MiB, as bbolt tries
			off := int64(1024) << i
			if off+pageHeaderSize+metaSize > size {
				break
			}
			if m, err := read(off); err == nil {
				pageSize = m.pageSize
				break
			}
		}
		if pageSize == 0 {
			return boltMeta{}, fmt.Errorf("no valid meta page (%v): not a bbolt file, or both meta pages damaged", err0)
		}
	}
	if pageSize < minPageSize || pageSize > maxPageSize || pageSize&(pageSize-1) != 0 {
		return boltMeta{}, fmt.Errorf("page size %d: not a power of two in [%d, %d]", pageSize, minPageSize, maxPageSize)
	}
	best, found := first, err0 == nil
	if second, err := read(int64(pageSize)); err == nil && (!found || second.txid > best.txid) {
		best, found = second, true
	}
	if !found {
		return boltMeta{}, fmt.Errorf("no valid meta page at 0 or %d (%v)", pageSize, err0)
	}
	if best.pageSize != pageSize {
		return boltMeta{}, fmt.Errorf("the meta page of txid %d says pages of %d bytes, its file is read in pages of %d", best.txid, best.pageSize, pageSize)
	}
	return best, nil
}

// checkFile refuses an existing data file that bbolt must not open: one
// shorter than its meta says (ErrCorrupt: "truncated: N bytes, meta says
// M"), one that is not a bbolt file, one whose pages bbolt cannot walk
// safely (ErrCorrupt, see checkPages), and one another process holds
// (ErrLocked). It only reads: a refused file is left as it is. A missing
// or empty file is for bbolt to create.
func checkFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mvcc: %w", err)
	}
	defer f.Close()
	if err := checkUnlocked(f); err != nil {
		return fmt.Errorf("%w: %s", err, path)
	}
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("mvcc: %w", err)
	}
	size := st.Size()
	if size == 0 {
		return nil
	}
	m, err := readMeta(f, size)
	if err != nil {
		return fmt.Errorf("%w: %s (%d bytes): %v", ErrCorrupt, path, size, err)
	}
	if m.pages > uint64(size)/uint64(m.pageSize) {
		if m.pages > math.MaxInt64/uint64(m.pageSize) {
			return fmt.Errorf("%w: %s (%d bytes): meta says %d pages of %d bytes", ErrCorrupt, path, size, m.pages, m.pageSize)
		}
		return fmt.Errorf("%w: %s is truncated: %d bytes, meta says %d", ErrCorrupt, path, size, m.pages*uint64(m.pageSize))
	}
	if err := checkPages(f, m); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	return nil
}
