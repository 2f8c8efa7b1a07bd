package wiretest

import (
	"testing"

	"github.com/httpkv/httpkv/wire"
)

func TestKeyValue(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kv         wire.KeyValue
		key, value string
	}{
		{"text", wire.KeyValue{Key: "k", Value: "v"}, "k", "v"},
		{"base64 twins", wire.KeyValue{KeyBase64: "/w==", ValueBase64: "AP4="}, "\xff", "\x00\xfe"},
		{"a twin that is not base64", wire.KeyValue{KeyBase64: "!"}, "!invalid base64 !", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if k, v := Key(tc.kv), Value(tc.kv); k != tc.key || v != tc.value {
				t.Errorf("Key, Value(%+v) = %q, %q; want %q, %q", tc.kv, k, v, tc.key, tc.value)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	got := Decode[wire.KeyValue](t, "a test", []byte(`{"key":"k","mod_revision":3}`))
	if got.Key != "k" || got.ModRevision != 3 {
		t.Errorf("Decode = %+v, want key k at mod_revision 3", got)
	}
}
