package mvcc

import (
	"bytes"
	"errors"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// FuzzDecodeKeyValue feeds the record decoders arbitrary bytes: they never
// panic, agree with each other, fail only with ErrCorrupt, and what they
// accept re-encodes to a record that decodes the same. The KeyValue owns
// its bytes: changing the record afterwards leaves it alone.
func FuzzDecodeKeyValue(f *testing.F) {
	f.Add(encodeKeyValue(nil, &kv.KeyValue{Key: []byte("a"), Value: []byte("x"), CreateRevision: 2, ModRevision: 3, Version: 2, Lease: 7}))
	f.Add(encodeKeyValue(nil, &kv.KeyValue{Key: []byte("k")}))
	f.Add(encodeKeyValue(nil, &kv.KeyValue{CreateRevision: -1, ModRevision: 1 << 62}))
	f.Add([]byte{kvFormat, 1, 2, 3, 4, 9, 'a'}) // key longer than the record
	f.Add([]byte{kvFormat, 0x80})               // truncated uvarint
	f.Add([]byte{kvFormat + 1, 0, 0, 0, 0, 0})  // unknown format
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		record := bytes.Clone(b)
		hdr, value, herr := decodeHeader(record)
		kval, err := decodeKeyValue(record)
		if (err == nil) != (herr == nil) {
			t.Fatalf("decodeKeyValue(%x) = %v but decodeHeader = %v", b, err, herr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !errors.Is(herr, ErrCorrupt) {
				t.Fatalf("decoding %x = %v, %v, want ErrCorrupt", b, err, herr)
			}
			return
		}
		want := kv.KeyValue{
			Key:            bytes.Clone(hdr.key),
			Value:          bytes.Clone(value),
			CreateRevision: hdr.create,
			ModRevision:    hdr.mod,
			Version:        hdr.version,
			Lease:          hdr.lease,
		}
		if !sameKeyValue(kval, want) {
			t.Fatalf("decodeKeyValue(%x) = %s, but decodeHeader says %s", b, showKV(&kval), showKV(&want))
		}
		for i := range record {
			record[i] ^= 0xff
		}
		if !sameKeyValue(kval, want) {
			t.Fatalf("decodeKeyValue(%x) = %s aliases its input: changing it made %s", b, showKV(&want), showKV(&kval))
		}
		again, err := decodeKeyValue(encodeKeyValue(nil, &kval))
		if err != nil || !sameKeyValue(again, kval) {
			t.Fatalf("decodeKeyValue(encodeKeyValue(%s)) = %s, %v, want it back", showKV(&kval), showKV(&again), err)
		}
	})
}

// FuzzKeyValueRoundTrip checks that every KeyValue survives encoding, also
// when appended to bytes already in the buffer.
func FuzzKeyValueRoundTrip(f *testing.F) {
	f.Add(int64(2), int64(3), int64(1), int64(0), []byte("a"), []byte("x"), []byte(nil))
	f.Add(int64(-5), int64(1<<62), int64(-1), int64(1<<40), []byte{}, []byte{0, 0xff}, []byte("prefix"))
	f.Fuzz(func(t *testing.T, create, mod, version, lease int64, key, value, prefix []byte) {
		kval := kv.KeyValue{Key: key, Value: value, CreateRevision: create, ModRevision: mod, Version: version, Lease: lease}
		enc := encodeKeyValue(bytes.Clone(prefix), &kval)
		if !bytes.HasPrefix(enc, prefix) {
			t.Fatalf("encodeKeyValue(%x, %s) = %x, lost the bytes already there", prefix, showKV(&kval), enc)
		}
		got, err := decodeKeyValue(enc[len(prefix):])
		if err != nil || !sameKeyValue(got, kval) {
			t.Fatalf("decodeKeyValue(encodeKeyValue(%s)) = %s, %v, want it back", showKV(&kval), showKV(&got), err)
		}
	})
}

// sameKeyValue compares KeyValues treating nil and empty bytes alike.
func sameKeyValue(a, b kv.KeyValue) bool {
	return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) &&
		a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision &&
		a.Version == b.Version && a.Lease == b.Lease
}
