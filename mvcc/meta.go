package mvcc

import (
	"encoding/binary"
	"math/rand/v2"

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
	// metaCheckpoint is the last checkpoint (see checkpointMark): its
	// revision, the base of the write-ahead log that follows it (see
	// wal), then its id, 16 bytes. A build from before the id wrote the
	// revision alone, 8 bytes, and still does if it runs on the file:
	// its value, like its log's base frame, reads as id 0. To it, the 16
	// bytes read as no checkpoint, so its first write checkpoints.
	metaCheckpoint = []byte("checkpointRev")
)

// checkpointMark identifies a checkpoint: its revision and a random id
// it draws, which the log's base frame holds too. The revision alone may
// be another file's checkpoint's as well (every new store checkpoints
// at revision 2).
type checkpointMark struct {
	rev int64
	id  uint64
}

// readCheckpoint reads the mark of the file's last checkpoint.
func readCheckpoint(meta *bolt.Bucket) checkpointMark {
	v := meta.Get(metaCheckpoint)
	switch len(v) {
	case 8:
		return checkpointMark{rev: int64(binary.BigEndian.Uint64(v))}
	case 16:
		return checkpointMark{rev: int64(binary.BigEndian.Uint64(v)), id: binary.BigEndian.Uint64(v[8:])}
	}
	return checkpointMark{}
}

// putCheckpoint records a new checkpoint at rev, with an id of its own,
// and returns its mark.
func putCheckpoint(meta *bolt.Bucket, rev int64) (checkpointMark, error) {
	m := checkpointMark{rev: rev, id: rand.Uint64()}
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(m.rev))
	return m, meta.Put(metaCheckpoint, binary.BigEndian.AppendUint64(v, m.id))
}

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
