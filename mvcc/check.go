package mvcc

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// maxCheckErrors bounds how many problems CheckFile reports.
const maxCheckErrors = 10

// CheckFile verifies the bbolt file at path without changing it: bbolt's
// consistency check of every page, then that the store's buckets exist
// and every record of the history decodes. Tools run it on a file of
// unknown origin (a backup) before opening it as a Store, since bbolt
// trusts the pages it reads. A problem found is an ErrCorrupt.
func CheckFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("mvcc: check: %w", err)
	}
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("mvcc: check %s: %w: %w", path, ErrCorrupt, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		// bbolt maps the file and reads pages where the meta page says
		// they are: past the end of a truncated file, that is a SIGBUS.
		if tx.Size() > info.Size() {
			return fmt.Errorf("truncated: %d bytes, its pages end at %d", info.Size(), tx.Size())
		}
		if err := walkPages(tx); err != nil {
			return err
		}
		var errs []error
		for err := range tx.Check() {
			if len(errs) < maxCheckErrors {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		return checkRecords(tx)
	})
	if err != nil {
		return fmt.Errorf("mvcc: check %s: %w: %w", path, ErrCorrupt, err)
	}
	return nil
}

// walkPages reads every page of every bucket. bbolt panics on a page that
// is not what its parent says, and faults on one outside the file; here
// both become an error. It runs before bbolt's own check, which walks the
// pages on a goroutine of its own, where such a panic would end the
// process.
func walkPages(tx *bolt.Tx) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading the pages: %v", r)
		}
	}()
	var walk func(b *bolt.Bucket) error
	walk = func(b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				if nested := b.Bucket(k); nested != nil {
					return walk(nested)
				}
			}
			return nil
		})
	}
	return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) })
}

// checkRecords decodes every record of the history and the store's
// metadata.
func checkRecords(tx *bolt.Tx) error {
	keys, meta := tx.Bucket(keyBucket), tx.Bucket(metaBucket)
	if keys == nil || meta == nil {
		return fmt.Errorf("no %q or %q bucket", keyBucket, metaBucket)
	}
	for _, k := range [][]byte{metaScheduledCompact, metaFinishedCompact} {
		if v := meta.Get(k); v != nil && len(v) != 8 {
			return fmt.Errorf("meta %q is %d bytes, want 8", k, len(v))
		}
	}
	return keys.ForEach(func(k, v []byte) error {
		rev, _, err := parseRevBytes(k)
		if err != nil {
			return err
		}
		if _, _, err := decodeHeader(v); err != nil {
			return fmt.Errorf("revision %v: %w", rev, err)
		}
		return nil
	})
}
