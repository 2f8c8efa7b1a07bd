package crash

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/mvcc/mvcctest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
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
	e2e.EmbeddedOnly(t, "it fails the store's commits to its file")
	for _, mode := range []struct {
		name string
		mode int32
	}{{"before", mvcctest.Before}, {"after", mvcctest.After}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			f := e2e.StartInProcess(t, dir)

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
							f.Faults.Set(mode.mode) // half way through, the disk fails
						}
						key, value := fmt.Sprintf("w%d/k%d", w, i%5), fmt.Sprintf("v%d", i)
						r, err := f.Send(t.Context(), "PUT", e2e.KeyPath(key), []byte(value))
						if err != nil {
							t.Errorf("PUT %s: %v", key, err)
							return
						}
						mu.Lock()
						switch r.Status {
						case http.StatusOK:
							var res client.PutResponse
							if err := json.Unmarshal(r.Body, &res); err != nil || res.Header.Revision == 0 {
								t.Errorf("%s = %s: no revision", r.Req, r.Body)
							}
							acked[key+"="+value] = res.Header.Revision
						case http.StatusServiceUnavailable:
							r.WantError(t, http.StatusServiceUnavailable, "unavailable")
							failed++
						default:
							t.Errorf("%s = %d %s, want 200 or 503", r.Req, r.Status, r.Body)
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if f.Faults.Failed() == 0 || failed == 0 {
				t.Fatalf("%d commits failed and %d writes answered 503, want both", f.Faults.Failed(), failed)
			}
			t.Logf("%d writes acknowledged, %d answered 503", len(acked), failed)

			// Every write after the failure is refused, whatever it is.
			f.Do(t, "PUT", e2e.KeyPath("later"), []byte("v")).WantError(t, http.StatusServiceUnavailable, "unavailable")
			f.Do(t, "DELETE", e2e.KeyPath("w0/k0"), nil).WantError(t, http.StatusServiceUnavailable, "unavailable")
			r := f.Do(t, "GET", "/health", nil)
			if r.Status != http.StatusServiceUnavailable {
				t.Fatalf("GET /health after a failed commit = %d %s, want 503", r.Status, r.Body)
			}
			// Reads keep working and see every acknowledged write.
			checkAcked := func(s *e2e.Server) {
				t.Helper()
				for kv, rev := range acked {
					key, value, _ := strings.Cut(kv, "=")
					var res client.GetResponse
					s.Do(t, "GET", fmt.Sprintf("%s?revision=%d", e2e.KeyPath(key), rev), nil).Ok(t, http.StatusOK, &res)
					if e2e.ValueOf(&res.Kv) != value || res.Kv.ModRevision != rev {
						t.Errorf("GET %s at %d = %s, want the acknowledged %q at %d", key, rev, e2e.KVString(&res.Kv), value, rev)
					}
				}
			}
			checkAcked(f.Server)

			// The fault clears; a restart recovers every acknowledged write.
			f.Faults.Set(mvcctest.None)
			f.Close()
			f = e2e.StartInProcess(t, dir)
			checkAcked(f.Server)
			f.Put(t, "after-restart", "v")
			if r := f.Do(t, "GET", "/health", nil); r.Status != http.StatusOK {
				t.Fatalf("GET /health after a restart = %d %s, want 200", r.Status, r.Body)
			}
		})
	}
}
