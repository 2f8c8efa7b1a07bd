// Package wiretest reads the API's documents as the tests of the
// packages that write them compare them: a field's bytes from either of
// its forms, and a document decoded strictly into its declared type. It
// is for tests only.
package wiretest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/httpkv/httpkv/wire"
)

// Key returns the key's bytes from whichever form the wire used.
func Key(kv wire.KeyValue) string { return Twin(kv.Key, kv.KeyBase64) }

// Value returns the value's bytes from whichever form the wire used.
func Value(kv wire.KeyValue) string { return Twin(kv.Value, kv.ValueBase64) }

// Twin returns the bytes of a field given as text or, when not valid
// UTF-8, as its base64 twin; a twin that is not base64 reads as a marker
// no test expects.
func Twin(text, b64 string) string {
	if b64 == "" {
		return text
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "!invalid base64 " + b64
	}
	return string(b)
}

// Decode decodes what name wrote into the declared wire type T, refusing
// fields T does not declare: the writer adds no field the document does
// not have.
func Decode[T any](tb testing.TB, name string, out []byte) T {
	tb.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("%s wrote %s, which %T does not declare: %v", name, out, v, err)
	}
	return v
}
