package mvcc

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// The layout of the bbolt file: the revisions of every key in one bucket,
// the store's own state under fixed keys in another.
var (
	keyBucket  = []byte("key")
	metaBucket = []byte("meta")

	metaScheduledCompact = []byte("scheduledCompactRev")
	metaFinishedCompact  = []byte("finishedCompactRev")
	metaAlarmNoSpace     = []byte("alarmNoSpace")
	// metaCheckpoint is the revision of the last checkpoint: the base of
	// the write-ahead log that follows it (see wal).
	metaCheckpoint = []byte("checkpointRev")
)

// readInt64 reads a meta value; a missing or malformed one reads as 0.
func readInt64(b *bolt.Bucket, key []byte) int64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// putInt64 writes a meta value.
func putInt64(b *bolt.Bucket, key []byte, n int64) error {
	return b.Put(key, binary.BigEndian.AppendUint64(nil, uint64(n)))
}
