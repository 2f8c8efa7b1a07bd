package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// A gateway to an etcd cluster streams etcd's own snapshot (its member's
// bbolt file and the file's SHA-256): the same frame as httpkv's, another
// store inside. `httpkv snapshot save` and `status` take it, reading
// etcd's layout; it is restored by etcd's tools (etcdutl snapshot
// restore), not into a data directory of httpkv's.

// Formats of the store inside a snapshot (Info.Format).
const (
	FormatHTTPKV = "httpkv"
	FormatEtcd   = "etcd"
)

// ErrEtcdSnapshot: Restore of an etcd snapshot, which etcd's tools
// restore.
var ErrEtcdSnapshot = errors.New("snapshot: an etcd snapshot: restore it into an etcd member with etcdutl snapshot restore")

// etcd's buckets and meta keys, as its storage schema names them.
var (
	etcdKeyBucket     = []byte("key")
	etcdMetaBucket    = []byte("meta")
	etcdLeaseBucket   = []byte("lease")
	etcdMembersBucket = []byte("members")
	etcdConsistentIdx = []byte("consistent_index")
	etcdFinishedComp  = []byte("finishedCompactRev")
)

// etcdRevBytes is the size of etcd's revision keys: the main revision, a
// '_', the sub revision; a tombstone's has a 't' after them.
const etcdRevBytes = 17

// isEtcd reports whether the bbolt file at path holds an etcd member's
// store: its membership bucket and its consistent index, which httpkv's
// store has neither of.
func isEtcd(path string) bool {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		return false
	}
	defer db.Close()
	found := false
	_ = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(etcdMetaBucket)
		found = tx.Bucket(etcdMembersBucket) != nil && meta != nil && meta.Get(etcdConsistentIdx) != nil
		return nil
	})
	return found
}

// examineEtcd reports what an etcd member's store holds: its revision and
// compact revision, its live keys (every namespace's) and its leases.
// It reads every record of the history, as etcd does when it starts.
func examineEtcd(path string) (Info, error) {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	defer db.Close()
	info := Info{Format: FormatEtcd}
	err = db.View(func(tx *bolt.Tx) error {
		keys := tx.Bucket(etcdKeyBucket)
		if keys == nil {
			return fmt.Errorf("%w: no %q bucket", ErrCorrupt, etcdKeyBucket)
		}
		live := make(map[string]bool)
		err := keys.ForEach(func(k, v []byte) error {
			if len(k) < etcdRevBytes {
				return fmt.Errorf("%w: revision key of %d bytes", ErrCorrupt, len(k))
			}
			var kv mvccpb.KeyValue
			if err := kv.Unmarshal(v); err != nil {
				return fmt.Errorf("%w: the record at revision %d: %w", ErrCorrupt, binary.BigEndian.Uint64(k), err)
			}
			info.Revision = max(info.Revision, int64(binary.BigEndian.Uint64(k)))
			live[string(kv.Key)] = len(k) == etcdRevBytes // a tombstone's key is longer
			return nil
		})
		if err != nil {
			return err
		}
		for _, alive := range live {
			if alive {
				info.Keys++
			}
		}
		if meta := tx.Bucket(etcdMetaBucket); meta != nil {
			if c := meta.Get(etcdFinishedComp); len(c) >= 8 {
				info.CompactRevision = int64(binary.BigEndian.Uint64(c))
				info.Revision = max(info.Revision, info.CompactRevision)
			}
		}
		if leases := tx.Bucket(etcdLeaseBucket); leases != nil {
			info.Leases = leases.Stats().KeyN
		}
		return nil
	})
	if err != nil {
		return Info{}, err
	}
	return info, nil
}
