package multi

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/wire"
)

// streamTimeout bounds how long a test waits for a stream to deliver.
const streamTimeout = 10 * time.Second

// openTestBackend opens the embedded backend in a temporary directory,
// closed on cleanup: the engine's streams watch a real store.
func openTestBackend(tb testing.TB, opts embedded.Options) *embedded.Backend {
	tb.Helper()
	return storetest.Open(tb, opts)
}

// keyOf returns the key's bytes from whichever form the wire used; a
// base64 twin that is not base64 reads as a marker no test expects.
func keyOf(kv wire.KeyValue) string { return fromTwin(kv.Key, kv.KeyBase64) }

// valueOf returns the value's bytes from whichever form the wire used.
func valueOf(kv wire.KeyValue) string { return fromTwin(kv.Value, kv.ValueBase64) }

func fromTwin(text, b64 string) string {
	if b64 == "" {
		return text
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "!invalid base64 " + b64
	}
	return string(b)
}

// waitFor polls cond until it holds or timeout passes; it returns whether
// it held.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}
