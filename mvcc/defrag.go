package mvcc

import (
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// Defrag rewrites the backend file without its free pages, so the space
// deletes and compactions freed goes back to the file system. Reads and
// writes wait while it runs.
func (s *Store) Defrag() error {
	_, err := s.submit(&request{exclusive: s.defrag})
	return err
}

// defrag runs on the committer goroutine, between batches.
func (s *Store) defrag() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tmp := s.path + ".defrag"
	_ = os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{NoSync: true, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
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
	// From here on the old file is closed: any failure leaves the store
	// failed until restart, when the rename has happened or not in full.
	if err := s.db.Close(); err != nil {
		return s.fail(fmt.Errorf("defrag: close: %w", err))
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return s.fail(fmt.Errorf("defrag: rename: %w", err))
	}
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return s.fail(fmt.Errorf("defrag: %w", err))
	}
	db, err := openBolt(s.path, s.opts.NoFsync)
	if err != nil {
		return s.fail(fmt.Errorf("defrag: reopen: %w", err))
	}
	s.db = db
	s.updateSize()
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
