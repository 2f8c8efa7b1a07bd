package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/httpkv/httpkv/mvcc"
)

// Restore verifies the snapshot file at src (its hash, then its
// structure) and writes its store, without the hash, into dir as the file
// name, where a server opening it starts at the snapshot's revision with
// everything the snapshot holds. dir must be empty or not exist yet
// (ErrNotEmpty). On any failure dir is left as it was found.
//
// Leases restart with their full TTL when the server starts, as after any
// restart.
func Restore(src, dir, name string) (info Info, err error) {
	info, err = Inspect(src)
	if err != nil {
		return Info{}, err
	}
	if info.Format == FormatEtcd {
		return Info{}, ErrEtcdSnapshot
	}
	f, err := os.Open(src)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	created, err := prepareDir(dir)
	if err != nil {
		return Info{}, err
	}
	// The data is hashed again on the way, so that a file changed since
	// it was verified is not restored.
	r := &verifyingReader{r: io.LimitReader(f, info.Size-HashSize), h: sha256.New(), want: info.Hash}
	if err := mvcc.InstallFile(filepath.Join(dir, name), r, nil); err != nil {
		// Remove the directories made for it, innermost first.
		for i := len(created) - 1; i >= 0; i-- {
			os.Remove(created[i])
		}
		return Info{}, fmt.Errorf("snapshot: restore: %w", err)
	}
	return info, nil
}

// prepareDir makes sure dir exists and is empty, creating it (and its
// parents) if need be. It returns the directories it created, outermost
// first.
func prepareDir(dir string) (created []string, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
			if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
				break
			}
			created = append([]string{d}, created...)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("snapshot: restore: %w", err)
		}
		return created, nil
	case err != nil:
		return nil, fmt.Errorf("snapshot: restore: %w", err)
	case len(entries) > 0:
		return nil, fmt.Errorf("%w: %s holds %s", ErrNotEmpty, dir, entries[0].Name())
	}
	return nil, nil
}

// verifyingReader hashes what it reads, and at the end fails instead of
// returning io.EOF unless the hash is want.
type verifyingReader struct {
	r    io.Reader
	h    hash.Hash
	want string
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if err == io.EOF && hex.EncodeToString(v.h.Sum(nil)) != v.want {
		return n, fmt.Errorf("%w: the file changed while it was restored", ErrCorrupt)
	}
	return n, err
}
