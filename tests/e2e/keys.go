package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
)

// SeedKeys writes n keys named fmt.Sprintf(format, i) with small values, a
// thousand to a txn, from a few writers at once.
func SeedKeys(tb testing.TB, s *Server, n int, format string) {
	tb.Helper()
	const perTxn = 1000
	batches := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := range batches {
				var b strings.Builder
				b.WriteString(`{"success":[`)
				for i := first; i < min(first+perTxn, n); i++ {
					if i > first {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"put":{"key":%s,"value":"v%d"}}`, JSONString(fmt.Sprintf(format, i)), i)
				}
				b.WriteString(`]}`)
				r, err := s.Send(tb.Context(), "POST", "/v1/txn", []byte(b.String()), "Content-Type", "application/json")
				// 503 asks a client to come back (a gateway whose etcd is
				// overloaded answers it); the txn puts the same values
				// again, whether or not it had.
				for retries := 0; err == nil && r.Status == http.StatusServiceUnavailable && retries < 5; retries++ {
					time.Sleep(time.Second)
					r, err = s.Send(tb.Context(), "POST", "/v1/txn", []byte(b.String()), "Content-Type", "application/json")
				}
				if err == nil && r.Status != http.StatusOK {
					err = fmt.Errorf("%s = %d %s", r.Req, r.Status, r.Body)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
feed:
	for first := 0; first < n; first += perTxn {
		select {
		case batches <- first:
		case err := <-errs:
			// A worker gave up: stop feeding, and report it below.
			errs <- err
			break feed
		}
	}
	close(batches)
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatalf("seeding %d keys: %v", n, err)
	}
}

// ListKeys returns the keys of a list answer, in order.
func ListKeys(l client.ListResponse) []string {
	return KeysOf(l.Kvs)
}

// KeysOf returns the keys of kvs, in order.
func KeysOf(kvs []client.KeyValue) []string {
	keys := make([]string, len(kvs))
	for i := range kvs {
		keys[i] = KeyOf(&kvs[i])
	}
	return keys
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// The answers are decoded into the generated client's types, loosely
// (extensions are allowed), so that the wire format is written down once.

// KeyOf returns the key's bytes from whichever form it came in.
func KeyOf(kv *client.KeyValue) string {
	if kv.Key != nil {
		return *kv.Key
	}
	if kv.KeyBase64 != nil {
		return string(*kv.KeyBase64)
	}
	return ""
}

// ValueOf returns the value's bytes from whichever form it came in.
func ValueOf(kv *client.KeyValue) string {
	if kv.Value != nil {
		return *kv.Value
	}
	if kv.ValueBase64 != nil {
		return string(*kv.ValueBase64)
	}
	return ""
}

// KVString shows a key-value for a failure message.
func KVString(kv *client.KeyValue) string {
	return fmt.Sprintf("{%q=%q create=%d mod=%d version=%d lease=%d}",
		KeyOf(kv), ValueOf(kv), kv.CreateRevision, kv.ModRevision, kv.Version, kv.Lease)
}

// KeyPath returns /v1/kv/ and key with every byte but the unreserved ones
// percent-encoded, "/" included.
func KeyPath(key string) string {
	const unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
	var b strings.Builder
	b.WriteString("/v1/kv/")
	for i := 0; i < len(key); i++ {
		if strings.IndexByte(unreserved, key[i]) >= 0 {
			b.WriteByte(key[i])
		} else {
			fmt.Fprintf(&b, "%%%02X", key[i])
		}
	}
	return b.String()
}

// JSONString quotes s as a JSON string.
func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Deref returns what p points to, or the zero value when it is nil: the
// optional fields of the generated types read as their absence.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
