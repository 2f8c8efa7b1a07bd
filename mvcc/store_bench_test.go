package mvcc

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// The benchmarks put fresh keys of benchKeyLen bytes with values of
// benchValueLen bytes. The writers=64 variants run benchWriters goroutines
// at once whatever the number of cores (rounded up to a multiple of
// GOMAXPROCS), to show what group commit buys when many clients write.
const (
	benchKeyLen   = 24
	benchValueLen = 128
	benchWriters  = 64
	// benchKeys is how many keys the range benchmarks read from.
	benchKeys = 10_000
)

// benchKey returns the i-th key of a family: "<prefix>/" and i in decimal,
// padded to benchKeyLen bytes.
func benchKey(prefix string, i uint64) []byte {
	return fmt.Appendf(nil, "%s/%0*d", prefix, benchKeyLen-len(prefix)-1, i)
}

func benchOpen(b *testing.B, opts Options) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "db"), nil, nil, opts)
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// benchWrite runs put b.N times, with i from 0 up: from this goroutine when
// writers is 1, else from writers goroutines at once.
func benchWrite(b *testing.B, writers int, put func(i uint64) error) {
	b.Helper()
	if writers == 1 {
		for i := uint64(0); b.Loop(); i++ {
			if err := put(i); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((writers + procs - 1) / procs)
	var next atomic.Uint64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := put(next.Add(1) - 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkPut measures puts of fresh keys, from one writer and from
// benchWriters at once, in three ways:
//
//   - fsync: Store.Put, whose committer commits each batch of queued puts
//     with one fsync (group commit);
//   - one_commit_per_write: the baseline, the same records (key, encoding,
//     value size, bbolt options) each written by a bbolt Update of its
//     own, so each costs a commit and an fsync; it keeps no index, so the
//     store's extra work counts against the store;
//   - nofsync: Store.Put with Options.NoFsync.
//
// The baseline runs right after fsync so that both see the same disk.
func BenchmarkPut(b *testing.B) {
	writerCounts := []struct {
		name string
		n    int
	}{
		{"serial", 1},
		{fmt.Sprintf("writers=%d", benchWriters), benchWriters},
	}
	for _, w := range writerCounts {
		b.Run(w.name+"/fsync", func(b *testing.B) { benchStorePut(b, w.n, Options{}) })
		b.Run(w.name+"/one_commit_per_write", func(b *testing.B) { benchBoltPut(b, w.n) })
		b.Run(w.name+"/nofsync", func(b *testing.B) { benchStorePut(b, w.n, Options{NoFsync: true}) })
	}
}

func benchStorePut(b *testing.B, writers int, opts Options) {
	s := benchOpen(b, opts)
	value := make([]byte, benchValueLen)
	benchWrite(b, writers, func(i uint64) error {
		_, err := s.Put(kv.PutRequest{Key: benchKey("put", i), Value: value})
		return err
	})
}

func benchBoltPut(b *testing.B, writers int) {
	db, err := openBolt(filepath.Join(b.TempDir(), "db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	value := make([]byte, benchValueLen)
	benchWrite(b, writers, func(i uint64) error {
		rev := int64(i) + 2
		kval := kv.KeyValue{Key: benchKey("put", i), Value: value, CreateRevision: rev, ModRevision: rev, Version: 1}
		return db.Update(func(tx *bolt.Tx) error {
			keys := tx.Bucket(keyBucket)
			keys.FillPercent = 0.9 // as WriteTxn sets it
			return keys.Put(revBytes(kv.Revision{Main: rev}, false), encodeKeyValue(nil, &kval))
		})
	})
}

// benchFill puts benchKeys keys "key/..." into s, a thousand per write.
func benchFill(b *testing.B, s *Store) {
	b.Helper()
	value := make([]byte, benchValueLen)
	for lo := uint64(0); lo < benchKeys; lo += 1000 {
		_, err := s.Write(func(tx *WriteTxn) error {
			for i := lo; i < min(lo+1000, benchKeys); i++ {
				if _, err := tx.Put(kv.PutRequest{Key: benchKey("key", i), Value: value}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("fill: %v", err)
		}
	}
}

// benchRangeKey ranges over single keys of a filled store in turn.
func benchRangeKey(b *testing.B, s *Store) {
	b.Helper()
	for i := uint64(0); b.Loop(); i++ {
		key := benchKey("key", i*7919%benchKeys)
		r, err := s.Range(key, nil, kv.RangeOptions{})
		if err != nil || len(r.KVs) != 1 {
			b.Fatalf("Range(%q) = %d keys, %v; want 1", key, len(r.KVs), err)
		}
	}
}

// BenchmarkRange measures reads of a store of benchKeys keys: one key when
// idle, one key while writers put, and a thousand keys at once.
func BenchmarkRange(b *testing.B) {
	b.Run("key", func(b *testing.B) {
		s := benchOpen(b, Options{NoFsync: true})
		benchFill(b, s)
		benchRangeKey(b, s)
	})
	for _, fsync := range []bool{true, false} {
		name := fmt.Sprintf("key/under_writers=%d/fsync", benchWriters)
		if !fsync {
			name = fmt.Sprintf("key/under_writers=%d/nofsync", benchWriters)
		}
		b.Run(name, func(b *testing.B) {
			s := benchOpen(b, Options{NoFsync: !fsync})
			benchFill(b, s)
			stop := benchBackgroundWriters(b, s, benchWriters)
			benchRangeKey(b, s)
			b.StopTimer()
			stop()
		})
	}
	b.Run("1000keys", func(b *testing.B) {
		s := benchOpen(b, Options{NoFsync: true})
		benchFill(b, s)
		from, to := benchKey("key", 0), benchKey("key", 1000)
		for b.Loop() {
			r, err := s.Range(from, to, kv.RangeOptions{})
			if err != nil || len(r.KVs) != 1000 {
				b.Fatalf("Range(%q, %q) = %d keys, %v; want 1000", from, to, len(r.KVs), err)
			}
		}
	})
	// Keys written one by one in another order than their key order, as
	// many clients filling a prefix at once write them: their records
	// are not in key order in the history.
	b.Run("1000keys/shuffled", func(b *testing.B) {
		s := benchOpen(b, Options{NoFsync: true})
		benchFill(b, s)
		value := make([]byte, benchValueLen)
		for i := range uint64(1000) {
			if _, err := s.Put(kv.PutRequest{Key: benchKey("mix", i*7919%1000), Value: value}); err != nil {
				b.Fatal(err)
			}
		}
		from, to := benchKey("mix", 0), benchKey("mix", 1000)
		b.Run("copied", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := s.Range(from, to, kv.RangeOptions{})
				if err != nil || len(r.KVs) != 1000 {
					b.Fatalf("Range(%q, %q) = %d keys, %v; want 1000", from, to, len(r.KVs), err)
				}
			}
		})
		// As a list reads them: inside the read, not copied (ReadTxn.View).
		b.Run("view", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rt, err := s.Read()
				if err != nil {
					b.Fatal(err)
				}
				err = rt.View(from, to, kv.RangeOptions{}, func(r *kv.RangeResult) error {
					if len(r.KVs) != 1000 {
						return fmt.Errorf("%d keys; want 1000", len(r.KVs))
					}
					return nil
				})
				rt.End()
				if err != nil {
					b.Fatalf("View(%q, %q): %v", from, to, err)
				}
			}
		})
	})
}

// benchBackgroundWriters starts n goroutines putting fresh keys into s. The
// returned stop ends them, waits for them, and reports the puts per second
// they made as the metric "bg-puts/s"; if the benchmark fails first, a
// cleanup stops them before the store closes.
func benchBackgroundWriters(b *testing.B, s *Store, n int) (stop func()) {
	b.Helper()
	done := make(chan struct{})
	var (
		wg   sync.WaitGroup
		puts atomic.Uint64
	)
	value := make([]byte, benchValueLen)
	start := time.Now()
	for range n {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				i := puts.Add(1)
				if _, err := s.Put(kv.PutRequest{Key: benchKey("bg", i), Value: value}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	halt := sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
	b.Cleanup(halt)
	return func() {
		halt()
		b.ReportMetric(float64(puts.Load())/time.Since(start).Seconds(), "bg-puts/s")
	}
}
