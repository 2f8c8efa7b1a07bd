package lease

import (
	"encoding/binary"
	"fmt"
)

// bucketName is the bbolt bucket lease records live in.
var bucketName = []byte("lease")

// recordFormat is the first byte of every encoded record, so that the
// layout can change later without guessing.
const recordFormat byte = 1

// record is what is stored of a lease: the key is its ID as 8 big-endian
// bytes, the value the format byte and the granted TTL as a uvarint. The
// expiry is not stored: after a restart every lease gets its full TTL again.
type record struct {
	id  int64
	ttl int64
}

func (r record) key() []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(r.id))
}

func (r record) value() []byte {
	return binary.AppendUvarint([]byte{recordFormat}, uint64(r.ttl))
}

// decodeRecord parses a key and value written by record.key and
// record.value. It accepts a TTL below MinTTL, so that a minimum raised by
// a later version does not make old records unreadable; Restore raises it.
func decodeRecord(k, v []byte) (record, error) {
	if len(k) != 8 {
		return record{}, fmt.Errorf("%w: key %x is %d bytes, want 8", ErrCorrupt, k, len(k))
	}
	r := record{id: int64(binary.BigEndian.Uint64(k))}
	if r.id < 1 || r.id > MaxID {
		return record{}, fmt.Errorf("%w: ID %d out of range", ErrCorrupt, r.id)
	}
	if len(v) == 0 || v[0] != recordFormat {
		return record{}, fmt.Errorf("%w: lease %d: unknown format", ErrCorrupt, r.id)
	}
	ttl, n := binary.Uvarint(v[1:])
	// Only the shortest encoding is accepted: it is the only one written.
	if n <= 0 || 1+n != len(v) || n != len(binary.AppendUvarint(nil, ttl)) {
		return record{}, fmt.Errorf("%w: lease %d: bad TTL encoding", ErrCorrupt, r.id)
	}
	if ttl < 1 || ttl > uint64(MaxTTL) {
		return record{}, fmt.Errorf("%w: lease %d: TTL %d out of range", ErrCorrupt, r.id, ttl)
	}
	r.ttl = int64(ttl)
	return r, nil
}
