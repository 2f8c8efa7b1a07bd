package wal

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// groupPuts and groupValueLen shape one write group as the store's
// committer sees it under 64 clients: about 28 puts of 128-byte values
// (docs/performance.md, "What bounds each row").
const (
	groupPuts     = 28
	groupValueLen = 128
)

// BenchmarkGroupDurable compares what makes one group of puts durable:
// appending it to the log with one fdatasync, against committing it to
// bbolt as the store does today (its pages, then its meta page, each
// followed by an fdatasync). The two run in the same process on the same
// disk, one after the other; compare their times within one run.
func BenchmarkGroupDurable(b *testing.B) {
	value := make([]byte, groupValueLen)
	b.Run("log", func(b *testing.B) {
		l, err := Open(filepath.Join(b.TempDir(), "log"), Options{}, func([]byte) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		var payload []byte
		for i := uint64(0); b.Loop(); i++ {
			payload = payload[:0]
			for j := range uint64(groupPuts) {
				payload = binary.BigEndian.AppendUint64(payload, i*groupPuts+j)
				payload = append(payload, value...)
			}
			if err := l.Append(payload); err != nil {
				b.Fatal(err)
			}
			if err := l.Sync(); err != nil {
				b.Fatal(err)
			}
			if l.Size() > 64<<20 {
				b.StopTimer()
				if err := l.Reset(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		}
	})
	b.Run("bbolt", func(b *testing.B) {
		db, err := bolt.Open(filepath.Join(b.TempDir(), "db"), 0o600, &bolt.Options{
			NoFreelistSync: true, FreelistType: bolt.FreelistMapType,
		})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		bucket := []byte("key")
		for i := uint64(0); b.Loop(); i++ {
			err := db.Update(func(tx *bolt.Tx) error {
				bk, err := tx.CreateBucketIfNotExists(bucket)
				if err != nil {
					return err
				}
				bk.FillPercent = 0.9
				for j := range uint64(groupPuts) {
					if err := bk.Put(binary.BigEndian.AppendUint64(nil, i*groupPuts+j), value); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
