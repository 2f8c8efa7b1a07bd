package tests

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// tenure is one holder's time with the lock, by revision.
type tenure struct {
	who      int
	created  int64 // its key's create revision
	held     int64 // the lock answer's revision
	marked   int64 // the revision of the key it wrote while holding
	released int64 // the unlock's revision
}

// TestLockContenders queues 50 contenders behind a holder, each holding
// the lock for a moment: no two tenures overlap in revision order, and
// the lock goes round in the order the contenders' keys were created.
func TestLockContenders(t *testing.T) {
	t.Parallel()
	const contenders = 50
	s := e2e.StartServer(t)
	first := s.Lock(t, "fifo", s.GrantLease(t, 600))
	var (
		mu      sync.Mutex
		tenures []tenure
		wg      sync.WaitGroup
	)
	for i := range contenders {
		lease := s.GrantLease(t, 600)
		wg.Go(func() {
			r, err := s.LockRequest(t, context.Background(), "fifo", lease, "2m")
			if err != nil || r.Status != http.StatusOK {
				t.Errorf("contender %d: lock = %v %v", i, r, err)
				return
			}
			var l client.LockResponse
			r.Decode(t, &l)
			// What a holder does: read its key, write while holding, let go.
			var own client.GetResponse
			r, err = s.Send(context.Background(), "GET", e2e.KeyPath(e2e.Deref(l.Key)), nil)
			if err == nil {
				r.Decode(t, &own)
			}
			mark, err2 := s.Send(context.Background(), "PUT", e2e.KeyPath(fmt.Sprintf("fifo-log/%d", i)), []byte("held"))
			released, err3 := s.Send(context.Background(), "DELETE", "/v1/locks/fifo?key="+e2e.Deref(l.Key), nil)
			if err := cmpErr(err, err2, err3); err != nil || mark.Status != 200 || released.Status != 200 {
				t.Errorf("contender %d while holding: %v", i, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			tenures = append(tenures, tenure{i, own.Kv.CreateRevision, l.Header.Revision, mark.Revision(t), released.Revision(t)})
		})
	}
	s.WaitQueue(t, "fifo", contenders+1)
	prev := tenure{released: s.Unlock(t, "fifo", e2e.Deref(first.Key))}
	wg.Wait()
	if len(tenures) != contenders {
		t.Fatalf("%d contenders held the lock, want %d", len(tenures), contenders)
	}
	slices.SortFunc(tenures, func(a, b tenure) int { return int(a.held - b.held) })
	for i, c := range tenures {
		if !(prev.released <= c.held && c.held < c.marked && c.marked < c.released) {
			t.Errorf("tenure %d (contender %d) held at %d, marked %d, released %d; the one before released at %d: they overlap",
				i, c.who, c.held, c.marked, c.released, prev.released)
		}
		if c.created <= prev.created {
			t.Errorf("tenure %d (contender %d) has its key created at %d, not after the previous tenure's %d: not FIFO",
				i, c.who, c.created, prev.created)
		}
		prev = c
	}
	if q := s.Queue(t, "fifo"); len(q) != 0 {
		t.Errorf("after every release fifo/ holds %q, want nothing", q)
	}
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestLockHolderExpires: a holder that stops renewing its lease loses the
// lock when the lease expires, and the next waiter gets it at the revoke.
// The lease is renewed until the holder holds: it may not expire first.
func TestLockHolderExpires(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	crashed := s.GrantLease(t, 5)
	crash := s.KeepAlive(t, crashed)
	holder := s.Lock(t, "exp", crashed)
	crash()
	next := s.Lock(t, "exp", s.GrantLease(t, 600)) // waits for the expiry
	var hist client.HistoryResponse
	s.Do(t, "GET", "/v1/history?key="+e2e.Deref(holder.Key), nil).Ok(t, http.StatusOK, &hist)
	var deleted int64
	for _, ev := range hist.Events {
		if ev.Type == "delete" {
			deleted = ev.Kv.ModRevision
		}
	}
	if deleted == 0 || next.Header.Revision < deleted {
		t.Fatalf("the next holder held at %d; the crashed holder's key was deleted at %d (history %+v): want the hand-over at or after the delete",
			next.Header.Revision, deleted, hist.Events)
	}
	s.Do(t, "GET", fmt.Sprintf("/v1/leases/%d", crashed), nil).WantError(t, http.StatusNotFound, "lease_not_found")
}

// TestLockWaiterLeaves: a waiter that times out, or whose client
// disconnects, leaves no key; the holder keeps the lock.
func TestLockWaiterLeaves(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	holder := s.Lock(t, "w", s.GrantLease(t, 600))
	waiter := s.GrantLease(t, 600)

	r, err := s.LockRequest(t, context.Background(), "w", waiter, "300ms")
	if err != nil {
		t.Fatal(err)
	}
	r.WantError(t, http.StatusRequestTimeout, "lock_timeout")
	if q := s.Queue(t, "w"); !slices.Equal(q, []string{e2e.Deref(holder.Key)}) {
		t.Fatalf("after a waiter timed out: w/ holds %q, want the holder's %s alone", q, e2e.Deref(holder.Key))
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.LockRequest(t, ctx, "w", waiter, "5m")
		done <- err
	}()
	s.WaitQueue(t, "w", 2)
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("the disconnected request = %v, want it canceled", err)
	}
	s.WaitQueue(t, "w", 1)
	if q := s.Queue(t, "w"); !slices.Equal(q, []string{e2e.Deref(holder.Key)}) {
		t.Fatalf("after a waiter disconnected: w/ holds %q, want the holder's %s alone", q, e2e.Deref(holder.Key))
	}
	// The holder still holds: the same lease gets it back at once.
	s.Lock(t, "w", lockLease(t, holder))
}

// lockLease returns the lease ID in a lock's owner key, name/<hex>.
func lockLease(tb testing.TB, l client.LockResponse) int64 {
	tb.Helper()
	key := e2e.Deref(l.Key)
	var id int64
	if _, err := fmt.Sscanf(key[strings.LastIndexByte(key, '/')+1:], "%x", &id); err != nil {
		tb.Fatalf("owner key %q: %v", key, err)
	}
	return id
}

// TestLockShutdown: a server asked to stop ends its waiting locks at
// once, removing their keys, and its holders' keys survive the restart.
func TestLockShutdown(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	holder := s.Lock(t, "sd", s.GrantLease(t, 600))
	waiter := s.GrantLease(t, 600)
	done := make(chan *e2e.Reply, 1)
	go func() {
		r, err := s.LockRequest(t, context.Background(), "sd", waiter, "5m")
		if err != nil {
			r = &e2e.Reply{Req: "lock", Body: []byte(err.Error())}
		}
		done <- r
	}()
	s.WaitQueue(t, "sd", 2)
	s.Stop()
	if r := <-done; r.Status != http.StatusServiceUnavailable {
		t.Fatalf("the waiting lock at shutdown = %d %s, want 503 unavailable", r.Status, r.Body)
	}
	s.Restart()
	if q := s.Queue(t, "sd"); !slices.Equal(q, []string{e2e.Deref(holder.Key)}) {
		t.Fatalf("after a restart sd/ holds %q, want the holder's %s alone", q, e2e.Deref(holder.Key))
	}
}
