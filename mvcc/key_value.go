package mvcc

import (
	"encoding/binary"
	"fmt"

	"github.com/httpkv/httpkv/kv"
)

// kvFormat is the first byte of every encoded KeyValue, so that the record
// layout can change later without guessing.
const kvFormat byte = 1

// maxRecordHeaderLen bounds what encodeKeyValue writes before the key and
// value bytes: the format byte and five uvarints.
const maxRecordHeaderLen = 1 + 5*binary.MaxVarintLen64

// encodeKeyValue lays rec out as: format, uvarint create, mod, version,
// lease, key length, then key and value bytes.
func encodeKeyValue(dst []byte, rec *kv.KeyValue) []byte {
	dst = append(dst, kvFormat)
	dst = binary.AppendUvarint(dst, uint64(rec.CreateRevision))
	dst = binary.AppendUvarint(dst, uint64(rec.ModRevision))
	dst = binary.AppendUvarint(dst, uint64(rec.Version))
	dst = binary.AppendUvarint(dst, uint64(rec.Lease))
	dst = binary.AppendUvarint(dst, uint64(len(rec.Key)))
	dst = append(dst, rec.Key...)
	return append(dst, rec.Value...)
}

// decodeKeyValue parses a record written by encodeKeyValue. The returned
// KeyValue owns fresh copies of the bytes, so it outlives the bbolt
// transaction b came from.
func decodeKeyValue(b []byte) (kv.KeyValue, error) {
	hdr, value, err := decodeHeader(b)
	if err != nil {
		return kv.KeyValue{}, err
	}
	buf := make([]byte, len(hdr.key)+len(value))
	n := copy(buf, hdr.key)
	copy(buf[n:], value)
	return kv.KeyValue{
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
