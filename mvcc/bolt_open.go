package mvcc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// mmapSize is how much address space bbolt maps the file into when it
// opens it. bbolt must map the file again to grow it past that, and that
// waits for every open read transaction to end: a snapshot streaming a
// large file to a slow client for minutes would hold every commit up.
// Mapping more than the file can grow to, the quota with as much again
// of room for the pages a long snapshot keeps from reuse, means that wait
// never comes. Address space is cheap on 64-bit systems and the mapping
// costs memory only as the file grows; etcd maps 10 GiB for the same
// reason. 32-bit systems keep bbolt's default, growing the mapping as the
// file grows.
func mmapSize(quota int64) int {
	if strconv.IntSize < 64 {
		return 0
	}
	return int(max(10<<30, 2*quota))
}

func openBolt(path string, opts Options) (*bolt.DB, error) {
	if err := checkFile(path); err != nil {
		return nil, err
	}
	_, statErr := os.Stat(path)
	created := os.IsNotExist(statErr)
	if opts.ReadOnly && created {
		return nil, fmt.Errorf("mvcc: open %s: %w", path, statErr)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         5 * time.Second,
		NoSync:          opts.NoFsync,
		NoFreelistSync:  true,
		FreelistType:    bolt.FreelistMapType,
		ReadOnly:        opts.ReadOnly,
		InitialMmapSize: mmapSize(opts.QuotaBytes),
		// The freelist is rebuilt by walking the file: at Open, not in
		// the first write a client waits for.
		PreLoadFreelist: !opts.ReadOnly,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		// Taken between checkFile's look and bbolt's.
		if f, ferr := os.Open(path); ferr == nil {
			err = lockedError(f)
			f.Close()
		}
		return nil, fmt.Errorf("%w: %s", err, path)
	}
	if err != nil {
		return nil, fmt.Errorf("mvcc: open %s: %w", path, err)
	}
	missing := false
	_ = db.View(func(tx *bolt.Tx) error {
		missing = tx.Bucket(keyBucket) == nil || tx.Bucket(metaBucket) == nil
		return nil
	})
	if opts.ReadOnly && missing {
		db.Close()
		return nil, fmt.Errorf("mvcc: open %s: %w: no %q or %q bucket", path, ErrCorrupt, keyBucket, metaBucket)
	}
	if !missing {
		// Nothing is written until the store is restored: a file Open
		// refuses is left as it was.
		return db, nil
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{keyBucket, metaBucket} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("mvcc: create buckets: %w", err)
	}
	if created && !opts.NoFsync {
		// Make the new file's directory entry durable too, or a crash
		// could lose the whole file and everything acknowledged in it.
		if err := syncDir(filepath.Dir(path)); err != nil {
			db.Close()
			return nil, fmt.Errorf("mvcc: sync data dir: %w", err)
		}
	}
	return db, nil
}
