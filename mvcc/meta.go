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
	// metaCheckpoint is the revision of the last checkpoint: the base of
	// the write-ahead log that follows it (see wal).
	metaCheckpoint = []byte("checkpointRev")
	// metaCheckpointID is a random number each checkpoint draws anew, in
	// the log's base too: the revision alone may be another file's
	// checkpoint's as well (every new store checkpoints at revision 2).
	metaCheckpointID = []byte("checkpointID")
)

// checkpointMark identifies a checkpoint: its revision and its random
// id. A file written before the id existed, and its log, have id 0.
type checkpointMark struct {
	rev int64
	id  uint64
}

// readCheckpoint reads the mark of the file's last checkpoint.
func readCheckpoint(meta *bolt.Bucket) checkpointMark {
	return checkpointMark{rev: readInt64(meta, metaCheckpoint), id: uint64(readInt64(meta, metaCheckpointID))}
}

// putCheckpoint records a new checkpoint at rev, with an id of its own,
// and returns its mark.
func putCheckpoint(meta *bolt.Bucket, rev int64) (checkpointMark, error) {
	m := checkpointMark{rev: rev, id: rand.Uint64()}
	if err := putInt64(meta, metaCheckpoint, m.rev); err != nil {
		return checkpointMark{}, err
	}
	return m, putInt64(meta, metaCheckpointID, int64(m.id))
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
