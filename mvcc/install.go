package mvcc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// InstallFile writes the file at path from r (a backup being saved or
// restored) durably and all at once: it copies r to a new temporary file
// beside path and syncs it, has verify (if not nil) check that file, then
// renames it to path, replacing any file there, and syncs the directory.
// After a crash, path holds the whole new file or what it held before. If
// r or verify fails, the temporary file is removed and path is left as it
// was.
func InstallFile(path string, r io.Reader, verify func(tmp string) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.partial")
	if err != nil {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	rr := &readErrReader{r: r}
	if _, err := io.Copy(f, rr); err != nil {
		if rr.err != nil {
			return rr.err // r's own, as r says it
		}
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	if verify != nil {
		if err := verify(f.Name()); err != nil {
			return err
		}
	}
	// A write-ahead log beside path belongs to the file being replaced:
	// replayed onto the new one, it could add writes it never had.
	if err := os.Remove(path + walSuffix); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("mvcc: install %s: %w", path, err)
	}
	return nil
}

// readErrReader keeps the error of its reader, to tell it from one of
// the writer.
type readErrReader struct {
	r   io.Reader
	err error
}

func (rr *readErrReader) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	if err != nil && err != io.EOF {
		rr.err = err
	}
	return n, err
}
