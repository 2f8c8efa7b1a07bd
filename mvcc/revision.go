package mvcc

import (
	"encoding/binary"
	"fmt"

	"github.com/httpkv/httpkv/kv"
)

// MaxRevision is the largest revision a store holds: a main revision, a
// sub revision, a create or mod revision, a version. It keeps every one
// exact in JSON, where clients (JavaScript's among them) read numbers as
// doubles, and far from wrapping around int64. A store that reached it
// refuses writes (kv.ErrNoSpace); at a million writes a second that
// takes 285 years.
const MaxRevision = 1<<53 - 1

const (
	// revBytesLen is the length of an encoded revision: 8 bytes of main, a
	// '_' separator and 8 bytes of sub, all big-endian so that bbolt's byte
	// order is revision order.
	revBytesLen = 8 + 1 + 8
	// markedRevBytesLen is an encoded revision followed by a mark byte.
	markedRevBytesLen = revBytesLen + 1
	// markTombstone marks the revision of a delete.
	markTombstone byte = 't'
)

// appendRevBytes appends the bbolt key of r to dst.
func appendRevBytes(dst []byte, r kv.Revision, tombstone bool) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Main))
	dst = append(dst, '_')
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Sub))
	if tombstone {
		dst = append(dst, markTombstone)
	}
	return dst
}

// revBytes returns the bbolt key of r.
func revBytes(r kv.Revision, tombstone bool) []byte {
	return appendRevBytes(make([]byte, 0, markedRevBytesLen), r, tombstone)
}

// parseRevBytes decodes a bbolt key written by appendRevBytes.
func parseRevBytes(b []byte) (rev kv.Revision, tombstone bool, err error) {
	switch {
	case len(b) == markedRevBytesLen && b[revBytesLen] == markTombstone:
		tombstone = true
	case len(b) == revBytesLen:
	default:
		return kv.Revision{}, false, fmt.Errorf("%w: revision key of %d bytes", ErrCorrupt, len(b))
	}
	if b[8] != '_' {
		return kv.Revision{}, false, fmt.Errorf("%w: revision key without separator", ErrCorrupt)
	}
	rev.Main = int64(binary.BigEndian.Uint64(b[:8]))
	rev.Sub = int64(binary.BigEndian.Uint64(b[9:17]))
	return rev, tombstone, nil
}
