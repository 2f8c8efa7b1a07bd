package etcd

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// The gateway is what the API serves.
var _ httpapi.Backend = (*Backend)(nil)

// recvTimeout bounds a wait for watch responses; a healthy gateway
// answers well within it.
const recvTimeout = 30 * time.Second

// openGateway opens a gateway to c under namespace ns, closed when the
// test ends.
func openGateway(tb testing.TB, c *etcdtest.Cluster, ns string, opts ...func(*Options)) *Backend {
	tb.Helper()
	o := Options{
		Endpoints: c.Endpoints(),
		Namespace: ns,
		Auth:      authConfig(),
	}
	for _, f := range opts {
		f(&o)
	}
	b, err := Open(context.Background(), func(err error) { tb.Logf("gateway: %v", err) }, o)
	if err != nil {
		tb.Fatalf("Open(%v, %q) = %v", c.Endpoints(), ns, err)
	}
	tb.Cleanup(func() {
		if err := b.Close(); err != nil {
			tb.Errorf("Close = %v", err)
		}
	})
	return b
}

// withoutCache opens a gateway that reads from etcd only: the tests of
// that path.
func withoutCache(o *Options) { o.ReadCacheBytes = -1 }

func authConfig() auth.Config { return auth.Config{BcryptCost: bcrypt.MinCost} }

// put puts key=value through b and returns the revision.
func put(tb testing.TB, b *Backend, key, value string) int64 {
	tb.Helper()
	res, err := b.Put(context.Background(), kv.PutRequest{Key: []byte(key), Value: []byte(value)}, nil)
	if err != nil {
		tb.Fatalf("Put(%q) = %v", key, err)
	}
	return res.Revision
}

// eventString is "put k=v@rev", "delete k@rev", with " (was v)" for a
// previous version.
func eventString(ev kv.Event) string {
	s := fmt.Sprintf("put %s=%s@%d", ev.KV.Key, ev.KV.Value, ev.KV.ModRevision)
	if ev.Type == kv.EventDelete {
		s = fmt.Sprintf("delete %s@%d", ev.KV.Key, ev.KV.ModRevision)
	}
	if ev.PrevKV != nil {
		s += fmt.Sprintf(" (was %s)", ev.PrevKV.Value)
	}
	return s
}

// recv reads a watch until it has seen revision last or ended, and
// returns its events and its final response, if any. It fails the test if
// a revision comes twice, out of order, or split across responses.
func recv(tb testing.TB, st kv.WatchStream, last int64) (events []string, final *kv.WatchResponse) {
	tb.Helper()
	deadline := time.After(recvTimeout)
	var seen int64
	for {
		for _, r := range st.Next() {
			if r.Canceled || r.CompactRevision != 0 {
				return events, &r
			}
			for i, ev := range r.Events {
				rev := ev.KV.ModRevision
				if rev < seen || rev == seen && i == 0 {
					tb.Fatalf("revision %d after %d (a duplicate, a split or out of order); events so far %q", rev, seen, events)
				}
				seen = rev
				events = append(events, eventString(ev))
			}
			if seen >= last {
				st.Release()
				return events, nil
			}
		}
		st.Release()
		select {
		case <-st.Ready():
		case <-deadline:
			tb.Fatalf("watch got %q, never revision %d", events, last)
		}
	}
}
