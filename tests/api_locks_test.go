package tests

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
)

// grantLease grants a lease of ttl seconds and returns its ID.
func (s *server) grantLease(tb testing.TB, ttl int64) int64 {
	tb.Helper()
	var l client.LeaseResponse
	s.do(tb, "POST", "/v1/leases", fmt.Appendf(nil, `{"ttl":%d}`, ttl)).ok(tb, http.StatusCreated, &l)
	return l.Id
}

// waitTimeout bounds a request that waits for a lock or a leadership: a
// bound on the test, not an assertion on timing.
const waitTimeout = 2 * time.Minute

// sendWaiting sends a request that may wait (a lock, a campaign), bounded
// by ctx and waitTimeout rather than the usual request timeout.
func (s *server) sendWaiting(ctx context.Context, method, path string, body []byte) (*reply, error) {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	return s.sendWith(s.streams, ctx, method, path, body)
}

// lockRequest posts a lock of name for lease, waiting up to timeout.
func (s *server) lockRequest(tb testing.TB, ctx context.Context, name string, lease int64, timeout string) (*reply, error) {
	r, err := s.sendWaiting(ctx, "POST", "/v1/locks/"+name+"?timeout="+timeout, fmt.Appendf(nil, `{"lease":%d}`, lease))
	if err == nil {
		checkReply(tb, r)
	}
	return r, err
}

// lock acquires name for lease and returns the answer.
func (s *server) lock(tb testing.TB, name string, lease int64) client.LockResponse {
	tb.Helper()
	r, err := s.lockRequest(tb, context.Background(), name, lease, "1m")
	if err != nil {
		tb.Fatal(err)
	}
	var l client.LockResponse
	r.ok(tb, http.StatusOK, &l)
	if want := fmt.Sprintf("%s/%x", name, lease); deref(l.Key) != want {
		tb.Fatalf("lock %s for lease %x: key %q, want %q", name, lease, deref(l.Key), want)
	}
	return l
}

// unlock releases a lock and returns the answer's revision.
func (s *server) unlock(tb testing.TB, name, key string) int64 {
	tb.Helper()
	return s.do(tb, "DELETE", "/v1/locks/"+name+"?key="+key, nil).want(tb, http.StatusOK).revision(tb)
}

// queue lists the keys under name/, oldest first.
func (s *server) queue(tb testing.TB, name string) []string {
	tb.Helper()
	var l client.ListResponse
	s.do(tb, "GET", "/v1/kv?key="+name+"/&prefix=true&sort_target=create", nil).ok(tb, http.StatusOK, &l)
	return listKeys(l)
}

// waitQueue waits until name/ holds n keys.
func (s *server) waitQueue(tb testing.TB, name string, n int) {
	tb.Helper()
	eventually(tb, time.Minute, func() (bool, string) {
		q := s.queue(tb, name)
		return len(q) == n, fmt.Sprintf("%s/ holds %q, want %d keys", name, q, n)
	})
}

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
	s := startServer(t)
	first := s.lock(t, "fifo", s.grantLease(t, 600))
	var (
		mu      sync.Mutex
		tenures []tenure
		wg      sync.WaitGroup
	)
	for i := range contenders {
		lease := s.grantLease(t, 600)
		wg.Go(func() {
			r, err := s.lockRequest(t, context.Background(), "fifo", lease, "2m")
			if err != nil || r.status != http.StatusOK {
				t.Errorf("contender %d: lock = %v %v", i, r, err)
				return
			}
			var l client.LockResponse
			r.decode(t, &l)
			// What a holder does: read its key, write while holding, let go.
			var own client.GetResponse
			r, err = s.send(context.Background(), "GET", keyPath(deref(l.Key)), nil)
			if err == nil {
				r.decode(t, &own)
			}
			mark, err2 := s.send(context.Background(), "PUT", keyPath(fmt.Sprintf("fifo-log/%d", i)), []byte("held"))
			released, err3 := s.send(context.Background(), "DELETE", "/v1/locks/fifo?key="+deref(l.Key), nil)
			if err := cmpErr(err, err2, err3); err != nil || mark.status != 200 || released.status != 200 {
				t.Errorf("contender %d while holding: %v", i, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			tenures = append(tenures, tenure{i, own.Kv.CreateRevision, l.Header.Revision, mark.revision(t), released.revision(t)})
		})
	}
	s.waitQueue(t, "fifo", contenders+1)
	prev := tenure{released: s.unlock(t, "fifo", deref(first.Key))}
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
	if q := s.queue(t, "fifo"); len(q) != 0 {
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
	s := startServer(t)
	crashed := s.grantLease(t, 5)
	crash := s.keepAlive(t, crashed)
	holder := s.lock(t, "exp", crashed)
	crash()
	next := s.lock(t, "exp", s.grantLease(t, 600)) // waits for the expiry
	var hist client.HistoryResponse
	s.do(t, "GET", "/v1/history?key="+deref(holder.Key), nil).ok(t, http.StatusOK, &hist)
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
	s.do(t, "GET", fmt.Sprintf("/v1/leases/%d", crashed), nil).wantError(t, http.StatusNotFound, "lease_not_found")
}

// TestLockWaiterLeaves: a waiter that times out, or whose client
// disconnects, leaves no key; the holder keeps the lock.
func TestLockWaiterLeaves(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	holder := s.lock(t, "w", s.grantLease(t, 600))
	waiter := s.grantLease(t, 600)

	r, err := s.lockRequest(t, context.Background(), "w", waiter, "300ms")
	if err != nil {
		t.Fatal(err)
	}
	r.wantError(t, http.StatusRequestTimeout, "lock_timeout")
	if q := s.queue(t, "w"); !slices.Equal(q, []string{deref(holder.Key)}) {
		t.Fatalf("after a waiter timed out: w/ holds %q, want the holder's %s alone", q, deref(holder.Key))
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.lockRequest(t, ctx, "w", waiter, "5m")
		done <- err
	}()
	s.waitQueue(t, "w", 2)
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("the disconnected request = %v, want it canceled", err)
	}
	s.waitQueue(t, "w", 1)
	if q := s.queue(t, "w"); !slices.Equal(q, []string{deref(holder.Key)}) {
		t.Fatalf("after a waiter disconnected: w/ holds %q, want the holder's %s alone", q, deref(holder.Key))
	}
	// The holder still holds: the same lease gets it back at once.
	s.lock(t, "w", lockLease(t, holder))
}

// lockLease returns the lease ID in a lock's owner key, name/<hex>.
func lockLease(tb testing.TB, l client.LockResponse) int64 {
	tb.Helper()
	key := deref(l.Key)
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
	s := startServer(t)
	holder := s.lock(t, "sd", s.grantLease(t, 600))
	waiter := s.grantLease(t, 600)
	done := make(chan *reply, 1)
	go func() {
		r, err := s.lockRequest(t, context.Background(), "sd", waiter, "5m")
		if err != nil {
			r = &reply{req: "lock", body: []byte(err.Error())}
		}
		done <- r
	}()
	s.waitQueue(t, "sd", 2)
	s.Stop()
	if r := <-done; r.status != http.StatusServiceUnavailable {
		t.Fatalf("the waiting lock at shutdown = %d %s, want 503 unavailable", r.status, r.body)
	}
	s.Restart()
	if q := s.queue(t, "sd"); !slices.Equal(q, []string{deref(holder.Key)}) {
		t.Fatalf("after a restart sd/ holds %q, want the holder's %s alone", q, deref(holder.Key))
	}
}
