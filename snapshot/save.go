package snapshot

import (
	"fmt"
	"io"

	"github.com/httpkv/httpkv/mvcc"
)

// Save keeps the snapshot read from r (a download of GET /v1/snapshot) as
// the file at path, once it has checked it: size bytes in all (unless
// size is negative), its hash, and its structure. Until then it is a
// temporary file beside path, which is removed if anything fails: path
// is replaced only by a verified snapshot, and a partial one never looks
// like a backup.
func Save(path string, r io.Reader, size int64) (Info, error) {
	check := NewChecker()
	var info Info
	r = &cutReader{r: r, check: check, size: size}
	err := mvcc.InstallFile(path, io.TeeReader(r, check), func(tmp string) error {
		if n := check.Written(); size >= 0 && n != size {
			return fmt.Errorf("%w: cut short: %d of %d bytes", ErrCorrupt, n, size)
		}
		hash, err := check.Check()
		if err != nil {
			return err
		}
		if info, err = Examine(tmp); err != nil {
			return err
		}
		info.Size, info.Hash = check.Written(), hash
		return nil
	})
	if err != nil {
		return Info{}, err
	}
	return info, nil
}

// cutReader says how far a snapshot got when its reader fails.
type cutReader struct {
	r     io.Reader
	check *Checker
	size  int64
}

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		got := c.check.Written() + int64(n)
		if c.size >= 0 {
			return n, fmt.Errorf("snapshot: cut short after %d of %d bytes: %w", got, c.size, err)
		}
		return n, fmt.Errorf("snapshot: cut short after %d bytes: %w", got, err)
	}
	return n, err
}
