package mvcc

import (
	goflag "flag"
	"path/filepath"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

var restoreKeys = goflag.Int("restore-keys", 200_000, "keys of the store BenchmarkRestore opens")

// BenchmarkRestore opens a store of -restore-keys keys, one put each with
// a 128-byte value as a client writes them, and closes it: the index
// rebuild a restart waits for. The file is written once, outside the
// timing.
func BenchmarkRestore(b *testing.B) {
	path := filepath.Join(b.TempDir(), "db")
	s, err := Open(path, Options{NoFsync: true})
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
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
