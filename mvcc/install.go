package mvcc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// InstallFile writes a store's file at path from r (a backup being
// restored), durably and all at once: it writes a temporary file beside
// path, syncs it, renames it to path and syncs the directory, so that
// after a crash path holds the whole file or nothing. path must not
// exist yet. If r fails, nothing is left behind.
func InstallFile(path string, r io.Reader) (err error) {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("mvcc: install %s: %w", path, os.ErrExist)
	}
	tmp := path + ".installing"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("mvcc: install: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := io.Copy(f, r); err != nil {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	return nil
}
