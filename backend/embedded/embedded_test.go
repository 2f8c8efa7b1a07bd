package embedded

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

func openBackend(tb testing.TB, dir string, opts Options) *Backend {
	tb.Helper()
	opts.Store.NoFsync = true
	opts.Auth.BcryptCost = bcrypt.MinCost
	b, err := Open(dir, nil, nil, opts)
	if err != nil {
		tb.Fatalf("Open(%s) = %v", dir, err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}

// events reads a watch until it has seen revision last, and returns its
// events as "put k=v@rev" and "delete k@rev".
func events(tb testing.TB, st kv.WatchStream, last int64) []string {
	tb.Helper()
	var got []string
	deadline := time.After(10 * time.Second)
	for {
		for _, r := range st.Next() {
			if r.Canceled || r.CompactRevision != 0 {
				tb.Fatalf("the watch ended: %+v", r)
			}
			for _, ev := range r.Events {
				if ev.Type == kv.EventDelete {
					got = append(got, fmt.Sprintf("delete %s@%d", ev.KV.Key, ev.KV.ModRevision))
				} else {
					got = append(got, fmt.Sprintf("put %s=%s@%d", ev.KV.Key, ev.KV.Value, ev.KV.ModRevision))
				}
				if ev.KV.ModRevision == last {
					return got
				}
			}
		}
		select {
		case <-st.Ready():
		case <-deadline:
			tb.Fatalf("watch got %q, never revision %d", got, last)
		}
	}
}

// TestEveryWriteReachesWatchers writes through every path the backend
// has — put, delete, txn, a lease revoke, a lease expiry, the store
// itself — and checks that a watcher of every key gets each revision
// once, in order; compaction and auth changes, which write no key, send
// it nothing. It runs in a synctest bubble, whose clock the lease
// expiry reads.
func TestEveryWriteReachesWatchers(t *testing.T) {
	synctest.Test(t, everyWriteReachesWatchers)
}

func everyWriteReachesWatchers(t *testing.T) {
	ctx := context.Background()
	b := openBackend(t, t.TempDir(), Options{})
	st, err := b.Watch(ctx, kv.WatchRequest{Key: []byte{0}, End: []byte{0}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s = %v", what, err)
		}
	}
	_, err = b.Put(ctx, kv.PutRequest{Key: []byte("a"), Value: []byte("1")}, nil)
	must("Put", err)
	_, err = b.Delete(ctx, kv.DeleteRequest{Key: []byte("a")})
	must("Delete", err)
	_, err = b.Txn(ctx, kv.TxnRequest{Success: []kv.Op{
		{Put: &kv.PutRequest{Key: []byte("b"), Value: []byte("2")}},
		{Put: &kv.PutRequest{Key: []byte("c"), Value: []byte("3")}},
	}}, nil)
	must("Txn", err)
	revoked, err := b.Grant(ctx, 7, 60)
	must("Grant", err)
	_, err = b.Put(ctx, kv.PutRequest{Key: []byte("d"), Value: []byte("4"), Lease: revoked.ID}, func([][]byte) error { return nil })
	must("Put with a lease", err)
	_, err = b.Revoke(ctx, revoked.ID, nil)
	must("Revoke", err)
	expiring, err := b.Grant(ctx, 8, 5)
	must("Grant", err)
	_, err = b.Txn(ctx, kv.TxnRequest{Success: []kv.Op{{Put: &kv.PutRequest{Key: []byte("e"), Value: []byte("5"), Lease: expiring.ID}}}}, func([][]byte) error { return nil })
	must("Txn with a lease", err)
	// Writes of no key: an auth change, a compaction.
	must("AddRole", b.Auth().AddRole("r"))
	rev := b.Rev()
	must("Compact", b.Compact(ctx, rev, true))
	time.Sleep(6 * time.Second) // lease 8 expires; the manager revokes it
	got := events(t, st, rev+1)
	put, err := b.Store().Put(kv.PutRequest{Key: []byte("f"), Value: []byte("6")})
	must("the store's Put", err)
	got = append(got, events(t, st, put.Revision)...)
	want := []string{"put a=1@2", "delete a@3", "put b=2@4", "put c=3@4", "put d=4@5", "delete d@6", "put e=5@7", "delete e@8", "put f=6@9"}
	if !slices.Equal(got, want) {
		t.Fatalf("the watcher got %q\nwant %q", got, want)
	}
}

// TestLeaseGuardSeesLeaseKeys: a put or a txn with a lease asks its guard,
// inside the write, about every key attached to the lease; a refusal
// writes nothing.
func TestLeaseGuardSeesLeaseKeys(t *testing.T) {
	ctx := context.Background()
	b := openBackend(t, t.TempDir(), Options{})
	if _, err := b.Grant(ctx, 1, 60); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"x", "y"} {
		if _, err := b.Put(ctx, kv.PutRequest{Key: []byte(k), Lease: 1}, nil); err != nil {
			t.Fatal(err)
		}
	}
	refused := errors.New("refused")
	var seen [][]byte
	guard := func(keys [][]byte) error { seen = keys; return refused }
	rev := b.Rev()
	if _, err := b.Put(ctx, kv.PutRequest{Key: []byte("z"), Lease: 1}, guard); !errors.Is(err, refused) {
		t.Fatalf("Put with a refusing guard = %v, want its error", err)
	}
	if fmt.Sprintf("%q", seen) != `["x" "y"]` {
		t.Errorf("the guard saw %q, want [x y]", seen)
	}
	txn := kv.TxnRequest{Success: []kv.Op{{Txn: &kv.TxnRequest{Failure: []kv.Op{{Put: &kv.PutRequest{Key: []byte("z"), Lease: 1}}}}}}}
	if _, err := b.Txn(ctx, txn, guard); !errors.Is(err, refused) {
		t.Fatalf("Txn with a lease in a nested branch and a refusing guard = %v, want its error", err)
	}
	if b.Rev() != rev {
		t.Errorf("refused writes made revision %d, want none after %d", b.Rev(), rev)
	}
}

// TestOpenTwiceAndClose: a second backend on the same directory fails
// with the store's lock error and leaves the first serving; Close is
// idempotent.
func TestOpenTwiceAndClose(t *testing.T) {
	dir := t.TempDir()
	b := openBackend(t, dir, Options{})
	if _, err := Open(dir, nil, nil, Options{Auth: auth.Config{BcryptCost: bcrypt.MinCost}}); !errors.Is(err, mvcc.ErrLocked) {
		t.Fatalf("a second Open of %s = %v, want mvcc.ErrLocked", dir, err)
	}
	if _, err := b.Put(context.Background(), kv.PutRequest{Key: []byte("k")}, nil); err != nil {
		t.Fatalf("Put after a failed second Open = %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("a second Close = %v", err)
	}
	if _, err := b.Put(context.Background(), kv.PutRequest{Key: []byte("k")}, nil); !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("Put after Close = %v, want kv.ErrClosed", err)
	}
}
