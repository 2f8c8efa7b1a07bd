package mvcc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt trusts its meta page: it maps the file and reads every page the
// meta counts, so a file cut short (a bad copy, a full disk, a careless
// truncate) makes it fault with SIGBUS past the end. And it waits, then
// says only "timeout", when another process holds the file. checkFile
// reads the meta pages itself first, and asks who holds the lock, so
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
	pages    uint64 // the high water mark: pages in use, the meta pages included
	txid     uint64
}

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
	return boltMeta{pageSize: le.Uint32(m[8:]), pages: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, nil
}

// readMeta returns the meta bbolt would use: the valid one of the two
// with the highest txid. Like bbolt, when the first is damaged it looks
// for the second at each page size it supports.
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
	var offsets []int64
	if err0 == nil {
		offsets = []int64{int64(first.pageSize)}
	} else {
		for i := range 15 { // 1 KiB to 16 MiB, as bbolt tries
			offsets = append(offsets, 1024<<i)
		}
	}
	best, found := first, err0 == nil
	for _, off := range offsets {
		if off+pageHeaderSize+metaSize > size {
			break
		}
		m, err := read(off)
		if err != nil {
			continue
		}
		if !found || m.txid > best.txid {
			best, found = m, true
		}
		break
	}
	if !found {
		return boltMeta{}, fmt.Errorf("no valid meta page (%v): not a bbolt file, or both meta pages damaged", err0)
	}
	return best, nil
}

// checkFile refuses an existing data file that bbolt must not open: one
// shorter than its meta says (ErrCorrupt: "truncated: N bytes, meta says
// M"), one that is not a bbolt file, and one another process holds
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
	if need := int64(m.pages) * int64(m.pageSize); size < need {
		return fmt.Errorf("%w: %s is truncated: %d bytes, meta says %d", ErrCorrupt, path, size, need)
	}
	return nil
}
