package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/mvcc/mvcctest"
	"github.com/httpkv/httpkv/openapi/client"
)

// TestDiskFault fails the store's commits while clients write: a write
// whose commit fails answers 503 unavailable and is not acknowledged, so
// is every later one; reads keep working and see every acknowledged
// write; /health says the backend failed; and once the fault is gone a
// restart recovers every acknowledged write at its revision. "before":
// the commit writes nothing (a write error); "after": the data reaches
// the file but the commit reports failure (an fsync error), so the
// unacknowledged writes may survive too.
func TestDiskFault(t *testing.T) {
	t.Parallel()
	embeddedOnly(t, "it fails the store's commits to its file")
	for _, mode := range []struct {
		name string
		mode int32
	}{{"before", mvcctest.Before}, {"after", mvcctest.After}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			f := startInProcess(t, dir)

			const writers, perWriter = 8, 40
			var (
				mu     sync.Mutex
				acked  = make(map[string]int64) // key=value -> revision
				failed int
				wg     sync.WaitGroup
			)
			for w := range writers {
				wg.Go(func() {
					for i := range perWriter {
						if w == 0 && i == perWriter/2 {
							f.faults.Set(mode.mode) // half way through, the disk fails
						}
						key, value := fmt.Sprintf("w%d/k%d", w, i%5), fmt.Sprintf("v%d", i)
						r, err := f.send(t.Context(), "PUT", keyPath(key), []byte(value))
						if err != nil {
							t.Errorf("PUT %s: %v", key, err)
							return
						}
						mu.Lock()
						switch r.status {
						case http.StatusOK:
							var res client.PutResponse
							if err := json.Unmarshal(r.body, &res); err != nil || res.Header.Revision == 0 {
								t.Errorf("%s = %s: no revision", r.req, r.body)
							}
							acked[key+"="+value] = res.Header.Revision
						case http.StatusServiceUnavailable:
							r.wantError(t, http.StatusServiceUnavailable, "unavailable")
							failed++
						default:
							t.Errorf("%s = %d %s, want 200 or 503", r.req, r.status, r.body)
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if f.faults.Failed() == 0 || failed == 0 {
				t.Fatalf("%d commits failed and %d writes answered 503, want both", f.faults.Failed(), failed)
			}
			t.Logf("%d writes acknowledged, %d answered 503", len(acked), failed)

			// Every write after the failure is refused, whatever it is.
			f.do(t, "PUT", keyPath("later"), []byte("v")).wantError(t, http.StatusServiceUnavailable, "unavailable")
			f.do(t, "DELETE", keyPath("w0/k0"), nil).wantError(t, http.StatusServiceUnavailable, "unavailable")
			r := f.do(t, "GET", "/health", nil)
			if r.status != http.StatusServiceUnavailable {
				t.Fatalf("GET /health after a failed commit = %d %s, want 503", r.status, r.body)
			}
			// Reads keep working and see every acknowledged write.
			checkAcked := func(s *server) {
				t.Helper()
				for kv, rev := range acked {
					key, value, _ := strings.Cut(kv, "=")
					var res client.GetResponse
					s.do(t, "GET", fmt.Sprintf("%s?revision=%d", keyPath(key), rev), nil).ok(t, http.StatusOK, &res)
					if valueOf(&res.Kv) != value || res.Kv.ModRevision != rev {
						t.Errorf("GET %s at %d = %s, want the acknowledged %q at %d", key, rev, kvString(&res.Kv), value, rev)
					}
				}
			}
			checkAcked(f.server)

			// The fault clears; a restart recovers every acknowledged write.
			f.faults.Set(mvcctest.None)
			f.close()
			f = startInProcess(t, dir)
			checkAcked(f.server)
			f.put(t, "after-restart", "v")
			if r := f.do(t, "GET", "/health", nil); r.status != http.StatusOK {
				t.Fatalf("GET /health after a restart = %d %s, want 200", r.status, r.body)
			}
		})
	}
}
