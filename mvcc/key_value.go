package mvcc

import (
	"encoding/binary"
	"fmt"
)

// KeyValue is one version of a key.
type KeyValue struct {
	Key            []byte
	Value          []byte
	CreateRevision int64 // main revision of the put that created this generation of the key
	ModRevision    int64 // main revision of the write that made this version
	Version        int64 // 1 for the put that created the key, +1 for each put since
	Lease          int64 // lease the key is attached to; 0 for none
}

// EventType tells a put from a delete.
type EventType int

const (
	EventPut EventType = iota
	EventDelete
)

func (t EventType) String() string {
	if t == EventDelete {
		return "delete"
	}
	return "put"
}

// Event is one change made by a write transaction. A delete's KV carries
// only the key and the ModRevision of the delete.
type Event struct {
	Type EventType
	KV   KeyValue
}

// kvFormat is the first byte of every encoded KeyValue, so that the record
// layout can change later without guessing.
const kvFormat byte = 1

// maxRecordHeaderLen bounds what encodeKeyValue writes before the key and
// value bytes: the format byte and five uvarints.
const maxRecordHeaderLen = 1 + 5*binary.MaxVarintLen64

// encodeKeyValue lays kv out as: format, uvarint create, mod, version,
// lease, key length, then key and value bytes.
func encodeKeyValue(dst []byte, kv *KeyValue) []byte {
	dst = append(dst, kvFormat)
	dst = binary.AppendUvarint(dst, uint64(kv.CreateRevision))
	dst = binary.AppendUvarint(dst, uint64(kv.ModRevision))
	dst = binary.AppendUvarint(dst, uint64(kv.Version))
	dst = binary.AppendUvarint(dst, uint64(kv.Lease))
	dst = binary.AppendUvarint(dst, uint64(len(kv.Key)))
	dst = append(dst, kv.Key...)
	return append(dst, kv.Value...)
}

// decodeKeyValue parses a record written by encodeKeyValue. The returned
// KeyValue owns fresh copies of the bytes, so it outlives the bbolt
// transaction b came from.
func decodeKeyValue(b []byte) (KeyValue, error) {
	hdr, value, err := decodeHeader(b)
	if err != nil {
		return KeyValue{}, err
	}
	buf := make([]byte, len(hdr.key)+len(value))
	n := copy(buf, hdr.key)
	copy(buf[n:], value)
	return KeyValue{
		Key:            buf[:n:n],
		Value:          buf[n:],
		CreateRevision: hdr.create,
		ModRevision:    hdr.mod,
		Version:        hdr.version,
		Lease:          hdr.lease,
	}, nil
}

// recordHeader is what recovery needs of a record, without copying it.
type recordHeader struct {
	create, mod, version, lease int64
	key                         []byte // aliases the bbolt page
}

// decodeHeader parses an encoded record into its header and its value, both
// aliasing b.
func decodeHeader(b []byte) (recordHeader, []byte, error) {
	if len(b) == 0 || b[0] != kvFormat {
		return recordHeader{}, nil, fmt.Errorf("%w: unknown record format", ErrCorrupt)
	}
	b = b[1:]
	var fields [5]uint64
	for i := range fields {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return recordHeader{}, nil, fmt.Errorf("%w: truncated record", ErrCorrupt)
		}
		fields[i] = v
		b = b[n:]
	}
	if fields[4] > uint64(len(b)) {
		return recordHeader{}, nil, fmt.Errorf("%w: key length %d beyond record", ErrCorrupt, fields[4])
	}
	return recordHeader{
		create:  int64(fields[0]),
		mod:     int64(fields[1]),
		version: int64(fields[2]),
		lease:   int64(fields[3]),
		key:     b[:fields[4]],
	}, b[fields[4]:], nil
}
