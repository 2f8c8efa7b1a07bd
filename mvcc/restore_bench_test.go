package mvcc

import (
	goflag "flag"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

var (
	restoreKeys = goflag.Int("restore-keys", 200_000, "keys of the store BenchmarkRestore opens")
	restoreFile = goflag.String("restore-file", "", "the store BenchmarkRestore opens: written there if missing, kept after")
)

// BenchmarkRestore opens a store of -restore-keys keys, one put each with
// a 128-byte value as a client writes them, and closes it: the index
// rebuild a restart waits for. The file is written once, outside the
// timing; with -restore-file, once for every run that names the file.
func BenchmarkRestore(b *testing.B) {
	path := *restoreFile
	if path == "" {
		path = filepath.Join(b.TempDir(), "db")
	}
	if _, err := os.Stat(path); err != nil {
		writeRestoreFile(b, path)
	}
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(path, nil, nil, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// writeRestoreFile writes -restore-keys keys to a store at path from 64
// writers.
func writeRestoreFile(b *testing.B, path string) {
	b.Helper()
	s, err := Open(path, nil, nil, Options{NoFsync: true})
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, benchValueLen)
	var wg sync.WaitGroup
	const writers = 64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < *restoreKeys; i += writers {
				if _, err := s.Put(kv.PutRequest{Key: benchKey("restore", uint64(i)), Value: value}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
}
