package mvcc

import (
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// Defrag rewrites the backend file without its free pages, so the space
// deletes and compactions freed goes back to the file system. Reads and
// writes wait while it runs; snapshots do not hold it up: they go on
// reading the old file, which is closed when the last of them ends.
func (s *Store) Defrag() error {
	_, err := s.submit(&request{exclusive: s.defrag})
	return err
}

// defragSuffix names the new file a defrag writes beside the store's.
const defragSuffix = ".defrag"

// removeDefragCopy removes the new file of a defrag a crash cut short,
// as large as the live data. Open calls it once it holds the file's
// lock, so no defrag of this file is running.
func removeDefragCopy(path string) { _ = os.Remove(path + defragSuffix) }

// defrag runs on the committer goroutine, between batches.
func (s *Store) defrag() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropSharedRead() // the old file is closed below
	tmp := s.path + defragSuffix
	_ = os.Remove(tmp)
	// Mapped as large as the store's file will be, so that the copy does
	// not map it again (and copy its open transaction's pages to the heap)
	// each time it grows.
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{
		NoSync: true, NoFreelistSync: true, FreelistType: bolt.FreelistMapType,
		InitialMmapSize: mmapSize(s.opts.QuotaBytes),
	})
	if err != nil {
		return fmt.Errorf("mvcc: defrag: %w", err)
	}
	if err := bolt.Compact(dst, s.db, 64<<20); err != nil {
		dst.Close()
		os.Remove(tmp)
		return fmt.Errorf("mvcc: defrag copy: %w", err)
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		os.Remove(tmp)
		return fmt.Errorf("mvcc: defrag sync: %w", err)
	}
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("mvcc: defrag close: %w", err)
	}
	// Nothing writes to the old file while the committer is here. The
	// rename replaces its name, not the file: the open handle, and any
	// snapshot reading it, still see the old one.
	if err := os.Rename(tmp, s.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("mvcc: defrag rename: %w", err)
	}
	// From here on the name is the new file's: writing on to the old one
	// would lose the writes, so any failure leaves the store failed until
	// restart, which finds the rename made in full or not at all.
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return s.fail(fmt.Errorf("defrag: %w", err))
	}
	db, err := openBolt(s.path, s.opts)
	if err != nil {
		return s.fail(fmt.Errorf("defrag: reopen: %w", err))
	}
	old := s.db
	s.db = db
	s.updateSize()
	if err := s.retire(old); err != nil {
		return fmt.Errorf("mvcc: defrag: close the old file: %w", err)
	}
	return nil
}

// retire closes a bbolt handle that is no longer the store's, or, while
// snapshots still read it, leaves that to the last of them.
func (s *Store) retire(db *bolt.DB) error {
	s.snapMu.Lock()
	if s.pinned[db] > 0 {
		s.retired[db] = true
		s.snapMu.Unlock()
		return nil
	}
	s.snapMu.Unlock()
	return db.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
