package lease_test

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/watch"
)

// TestExpiryReachesWatchersInOneDelivery wires the lessor, the store and
// the watchable store as the server does, with revokes going through the
// watch store, and checks that a watcher of the leased keys receives all
// of an expiry's deletes in one response, at one revision.
func TestExpiryReachesWatchersInOneDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lease.Config{})
		ws, err := mvcc.Observe(e.store, func(rev int64) *watch.Store { return watch.New(e.store, rev, watch.Options{}) })
		if err != nil {
			t.Fatalf("mvcc.Observe = %v", err)
		}
		defer ws.Close()
		m := lease.NewManager(e.lessor, storeWriter{e.store}, func(err error) {
			if !errors.Is(err, kv.ErrClosed) {
				t.Errorf("revoking an expired lease: %v", err)
			}
		})
		defer m.Close()

		mustGrant(t, e, 7, 5)
		for _, k := range []string{"svc/a", "svc/b", "svc/c"} {
			if _, err := e.store.Put(leasedPut(k, 7)); err != nil {
				t.Fatalf("Put(%q) = %v", k, err)
			}
		}
		if _, err := e.store.Put(kv.PutRequest{Key: []byte("svc/d"), Value: []byte("stays")}); err != nil {
			t.Fatalf("Put(svc/d) = %v", err)
		}
		st, err := ws.Watch(kv.WatchRequest{Key: []byte("svc/"), End: []byte("svc0")})
		if err != nil {
			t.Fatalf("Watch(svc/) = %v", err)
		}
		defer st.Close()

		advance(6 * time.Second)

		rs := st.Next()
		if len(rs) != 1 {
			t.Fatalf("after expiry the watcher got %d responses %+v, want 1", len(rs), rs)
		}
		var keys []string
		for _, ev := range rs[0].Events {
			if ev.Type != kv.EventDelete || ev.KV.ModRevision != rs[0].Revision {
				t.Fatalf("event %v of %q at %d, want deletes at %d", ev.Type, ev.KV.Key, ev.KV.ModRevision, rs[0].Revision)
			}
			keys = append(keys, string(ev.KV.Key))
		}
		if !slices.Equal(keys, []string{"svc/a", "svc/b", "svc/c"}) {
			t.Fatalf("deleted %q in one delivery, want [svc/a svc/b svc/c]", keys)
		}
	})
}
