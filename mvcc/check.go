package mvcc

import (
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// maxCheckErrors bounds how many problems CheckFile reports.
const maxCheckErrors = 10

// CheckFile verifies the bbolt file at path without changing it: that
// bbolt can walk its pages safely (see checkPages), then bbolt's own
// consistency check of every page (keys in order, every page either in
// use or free). Tools run it on a file of unknown origin (a backup)
// before opening it, since bbolt trusts the pages it reads; what the
// records mean is checked by Open, which refuses a store whose records
// are not ones it writes. It checks any bbolt file, httpkv's store or
// another's. A problem found is an ErrCorrupt.
func CheckFile(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("mvcc: check: %w", err)
	}
	if err := checkFile(path); err != nil {
		return err
	}
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("mvcc: check %s: %w: %w", path, ErrCorrupt, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		// Check walks the pages on a goroutine of its own, which
		// recovers what bbolt panics with; checkFile made sure none of
		// its reads leaves the file.
		var errs []error
		for err := range tx.Check() {
			if len(errs) < maxCheckErrors {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return fmt.Errorf("mvcc: check %s: %w: %w", path, ErrCorrupt, err)
	}
	return nil
}
