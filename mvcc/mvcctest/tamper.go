package mvcctest

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A Tampering edits a closed store's bbolt file as someone holding the
// file could: with bbolt itself or byte by byte, around every check of
// the store, leaving a file that bbolt still opens (and that a snapshot
// made of it, its hash recomputed, verifies) but that no store writes.
// Whatever reads such a file must refuse it with a clear error, and
// neither panic nor serve it.
type Tampering struct {
	Name string
	// Edit tampers with the closed store file at path, a store with at
	// least one put in its history and one bucket of more than one
	// page.
	Edit func(tb testing.TB, path string)
}

// Tamperings returns every way of tampering the tests know.
func Tamperings() []Tampering {
	put := func(name string, rev func(last uint64) uint64, create, version, lease func(rev uint64) uint64) Tampering {
		return Tampering{name, func(tb testing.TB, path string) {
			edit(tb, path, func(tx *bolt.Tx) error {
				k, _ := tx.Bucket(keyBucket).Cursor().Last()
				r := rev(binary.BigEndian.Uint64(k))
				return tx.Bucket(keyBucket).Put(RevKey(r, 0, false), Record(create(r), r, version(r), lease(r), []byte("tampered"), []byte("v")))
			})
		}}
	}
	next := func(last uint64) uint64 { return last + 1 }
	at := func(rev uint64) func(uint64) uint64 { return func(uint64) uint64 { return rev } }
	same := func(rev uint64) uint64 { return rev }
	one, none := at(1), at(0)
	return []Tampering{
		put("a revision past 2^63", at(1<<63+5), same, one, none),
		put("a revision of MaxInt64", at(math.MaxInt64), same, one, none),
		put("a revision past 2^53-1", at(1<<53), same, one, none),
		put("create_revision above mod_revision", next, func(rev uint64) uint64 { return rev + 1 }, one, none),
		put("create_revision 0", next, at(0), one, none),
		put("version 0", next, same, at(0), none),
		put("version of MaxInt64", next, same, at(math.MaxInt64), none),
		put("lease 2^62", next, same, one, at(1<<62)),
		put("a key on a lease that does not exist", next, same, one, at(4242)),
		{"mod_revision not its revision", func(tb testing.TB, path string) {
			edit(tb, path, func(tx *bolt.Tx) error {
				k, _ := tx.Bucket(keyBucket).Cursor().Last()
				r := binary.BigEndian.Uint64(k) + 1
				return tx.Bucket(keyBucket).Put(RevKey(r, 0, false), Record(r, r+7, 1, 0, []byte("tampered"), nil))
			})
		}},
		{"a delete with a value", func(tb testing.TB, path string) {
			edit(tb, path, func(tx *bolt.Tx) error {
				k, _ := tx.Bucket(keyBucket).Cursor().Last()
				r := binary.BigEndian.Uint64(k) + 1
				return tx.Bucket(keyBucket).Put(RevKey(r, 0, true), Record(0, r, 0, 0, []byte("tampered"), []byte("v")))
			})
		}},
		{"a put and a delete at one revision", func(tb testing.TB, path string) {
			edit(tb, path, func(tx *bolt.Tx) error {
				// The newest record's revision, for a record of the other kind.
				k, _ := tx.Bucket(keyBucket).Cursor().Last()
				r, sub := binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[9:])
				if len(k) > 17 {
					return tx.Bucket(keyBucket).Put(RevKey(r, sub, false), Record(r, r, 1, 0, []byte("tampered"), nil))
				}
				return tx.Bucket(keyBucket).Put(RevKey(r, sub, true), Record(0, r, 0, 0, []byte("tampered"), nil))
			})
		}},
		{"a compaction scheduled at 2^40", func(tb testing.TB, path string) {
			edit(tb, path, func(tx *bolt.Tx) error {
				return tx.Bucket(metaBucket).Put([]byte("scheduledCompactRev"), binary.BigEndian.AppendUint64(nil, 1<<40))
			})
		}},
		{"a compaction finished after the scheduled one", func(tb testing.TB, path string) {
			edit(tb, path, func(tx *bolt.Tx) error {
				meta := tx.Bucket(metaBucket)
				if err := meta.Put([]byte("scheduledCompactRev"), binary.BigEndian.AppendUint64(nil, 1)); err != nil {
					return err
				}
				return meta.Put([]byte("finishedCompactRev"), binary.BigEndian.AppendUint64(nil, 2))
			})
		}},
		{"a meta page of 512-byte pages", func(tb testing.TB, path string) {
			patchMeta(tb, path, func(pageSize []byte) { binary.NativeEndian.PutUint32(pageSize, 512) })
		}},
		{"a meta page of 1 KiB pages", func(tb testing.TB, path string) {
			patchMeta(tb, path, func(pageSize []byte) { binary.NativeEndian.PutUint32(pageSize, 1024) })
		}},
		{"a page that names another", func(tb testing.TB, path string) {
			patchPage(tb, path, func(page []byte, root uint64) { binary.NativeEndian.PutUint64(page, root+1) })
		}},
		{"a branch page that leads back to itself", func(tb testing.TB, path string) {
			// The first element of a branch page: its key's position and
			// size, then its child.
			patchPage(tb, path, func(page []byte, root uint64) { binary.NativeEndian.PutUint64(page[pageHeaderSize+8:], root) })
		}},
		{"a key past its page", func(tb testing.TB, path string) {
			patchPage(tb, path, func(page []byte, root uint64) {
				binary.NativeEndian.PutUint32(page[pageHeaderSize+4:], 1<<30)
			})
		}},
	}
}

// The store's layout, as a tamperer reads it off a file: mvcc's own code
// is not used, so that a change there cannot hide what a file holds.
var (
	keyBucket  = []byte("key")
	metaBucket = []byte("meta")
)

// pageHeaderSize is the size of a bbolt page's header: its ID, flags,
// element count and overflow count.
const pageHeaderSize = 16

// RevKey returns the key of a history record: the main revision, '_',
// the sub revision, both 8 bytes big-endian, and 't' for a delete.
func RevKey(main, sub uint64, tombstone bool) []byte {
	k := binary.BigEndian.AppendUint64(nil, main)
	k = append(k, '_')
	k = binary.BigEndian.AppendUint64(k, sub)
	if tombstone {
		k = append(k, 't')
	}
	return k
}

// Record returns a history record: the format byte 1, then uvarints of
// create_revision, mod_revision, version, lease and the key's length,
// then the key and the value.
func Record(create, mod, version, lease uint64, key, value []byte) []byte {
	b := []byte{1}
	for _, n := range []uint64{create, mod, version, lease, uint64(len(key))} {
		b = binary.AppendUvarint(b, n)
	}
	b = append(b, key...)
	return append(b, value...)
}

// edit runs fn in one bbolt write transaction on the file at path.
func edit(tb testing.TB, path string, fn func(tx *bolt.Tx) error) {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		tb.Fatalf("bolt.Open(%s) = %v", path, err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		tb.Fatalf("tampering with %s: %v", path, err)
	}
}

// patchMeta rewrites the meta page of the file's newest transaction as
// fn says, giving it the highest txid of the two and a checksum that
// matches, so that bbolt takes it. fn gets the meta's page-size field.
func patchMeta(tb testing.TB, path string, fn func(pageSize []byte)) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	// The meta: magic, version, page size, flags, root bucket (16 bytes),
	// freelist, high water mark, txid, checksum of what is before it.
	le := binary.NativeEndian
	m := b[pageHeaderSize : pageHeaderSize+64]
	pageSize := le.Uint32(m[8:])
	other := b[int(pageSize)+pageHeaderSize : int(pageSize)+pageHeaderSize+64]
	fn(m[8:12])
	le.PutUint64(m[48:], max(le.Uint64(m[48:]), le.Uint64(other[48:]))+1)
	h := fnv.New64a()
	h.Write(m[:56])
	le.PutUint64(m[56:], h.Sum64())
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// patchPage rewrites, as fn says, the root page of the store's history
// bucket, a branch page: fn gets the page's bytes and its ID.
func patchPage(tb testing.TB, path string, fn func(page []byte, id uint64)) {
	tb.Helper()
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		tb.Fatalf("bolt.Open(%s) = %v", path, err)
	}
	pageSize := uint64(db.Info().PageSize)
	var root uint64
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(keyBucket)
		root = uint64(b.Root())
		if b.Stats().Depth < 2 {
			return fmt.Errorf("the history bucket is one page: nothing to lead to")
		}
		return nil
	})
	db.Close()
	if err != nil {
		tb.Fatalf("tampering with %s: %v", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	page := make([]byte, pageSize)
	if _, err := f.ReadAt(page, int64(root*pageSize)); err != nil {
		tb.Fatal(err)
	}
	fn(page, root)
	if _, err := f.WriteAt(page, int64(root*pageSize)); err != nil {
		tb.Fatal(err)
	}
}

// Seal writes the snapshot of the store file at db to path: its bytes,
// then their SHA-256, as a snapshot is made, so that the file verifies
// whatever it holds.
func Seal(tb testing.TB, db, path string) {
	tb.Helper()
	b, err := os.ReadFile(db)
	if err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if err := os.WriteFile(path, append(b, sum[:]...), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// Unseal writes the store file a snapshot at path holds, without its
// SHA-256, to db.
func Unseal(tb testing.TB, path, db string) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if len(b) < sha256.Size {
		tb.Fatalf("%s: %d bytes, no snapshot", path, len(b))
	}
	if err := os.WriteFile(db, b[:len(b)-sha256.Size], 0o600); err != nil {
		tb.Fatal(err)
	}
}
