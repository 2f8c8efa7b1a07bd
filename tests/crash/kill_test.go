package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

const (
	killRounds  = 2
	killWriters = 8
	// The server is killed this long after its first acknowledged write of
	// a round, chosen at random in [killMinDelay, killMaxDelay).
	killMinDelay = 100 * time.Millisecond
	killMaxDelay = 700 * time.Millisecond
)

// killAck is a PUT the server acknowledged with 200.
type killAck struct {
	key, value string
	rev        int64
}

// TestKillDuringWrites sends SIGKILL to a server with fsync on while
// goroutines PUT distinct keys, restarts it on the same data directory,
// and checks that every write it acknowledged is there at the revision
// its answer named. Rounds share the data directory, so later rounds
// write to a store recovered from a kill.
func TestKillDuringWrites(t *testing.T) {
	t.Parallel()
	rng := e2e.TestRand(t, "HTTPKV_KILL_SEED")
	s := e2e.StartServer(t, "--unsafe-no-fsync=false")
	var acks []killAck
	for round := range killRounds {
		delay := killMinDelay + time.Duration(rng.Int64N(int64(killMaxDelay-killMinDelay)))
		got := writeUntilKilled(t, s, round, delay)
		t.Logf("round %d: killed %v after the first acknowledgment, %d writes acknowledged", round, delay, len(got))
		acks = append(acks, got...)
		s.Restart()
		checkAcked(t, s, acks)
	}
}

// writeUntilKilled writes from killWriters goroutines until the server is
// killed, delay after its first acknowledgment, and returns what it
// acknowledged.
func writeUntilKilled(t testing.TB, s *e2e.Server, round int, delay time.Duration) []killAck {
	t.Helper()
	var (
		mu    sync.Mutex
		acks  []killAck
		wg    sync.WaitGroup
		first = make(chan struct{})
		once  sync.Once
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for w := range killWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				key := fmt.Sprintf("kill/%d/%d/%06d", round, w, i)
				value := fmt.Sprintf("%d-%d-%d", round, w, i)
				r, err := s.Send(ctx, "PUT", e2e.KeyPath(key), []byte(value))
				if err != nil {
					return // the server is gone
				}
				var p client.PutResponse
				if r.Status != http.StatusOK || json.Unmarshal(r.Body, &p) != nil {
					continue // not acknowledged
				}
				mu.Lock()
				acks = append(acks, killAck{key, value, p.Header.Revision})
				mu.Unlock()
				once.Do(func() { close(first) })
			}
		}()
	}
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		t.Fatal("no write acknowledged within 30s")
	}
	time.Sleep(delay) // the random moment of the kill, not a wait for a condition
	s.Kill()
	wg.Wait()
	return acks
}

// checkAcked checks that every acknowledged write reads back at its
// revision, as a version 1 key created and modified there.
func checkAcked(t testing.TB, s *e2e.Server, acks []killAck) {
	t.Helper()
	cur := s.Status(t).Revision
	revs := make(map[int64]string)
	for _, a := range acks {
		if other, dup := revs[a.rev]; dup {
			t.Fatalf("PUT %s and PUT %s were both acknowledged at revision %d", other, a.key, a.rev)
		}
		revs[a.rev] = a.key
		if a.rev > cur {
			t.Fatalf("PUT %s was acknowledged at revision %d, but the restarted server is at %d", a.key, a.rev, cur)
		}
	}

	var (
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
		next     = make(chan killAck)
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range next {
				if msg := checkAck(s, a); msg != "" {
					mu.Lock()
					failures = append(failures, msg)
					mu.Unlock()
				}
			}
		}()
	}
	for _, a := range acks {
		next <- a
	}
	close(next)
	wg.Wait()
	for i, f := range failures {
		if i == 20 {
			t.Fatalf("... and %d more", len(failures)-20)
		}
		t.Error(f)
	}
}

// checkAck reads one acknowledged write back at its revision and says
// what is wrong, or "".
func checkAck(s *e2e.Server, a killAck) string {
	path := fmt.Sprintf("%s?revision=%d", e2e.KeyPath(a.key), a.rev)
	r, err := s.Send(context.Background(), "GET", path, nil)
	if err != nil {
		return err.Error()
	}
	var g client.GetResponse
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &g) != nil {
		return fmt.Sprintf("GET %s = %d %s, want the write acknowledged at revision %d", path, r.Status, r.Body, a.rev)
	}
	want := fmt.Sprintf("{%q=%q create=%d mod=%d version=1 lease=0}", a.key, a.value, a.rev, a.rev)
	if got := e2e.KVString(&g.Kv); got != want {
		return fmt.Sprintf("GET %s = %s, want %s as acknowledged", path, got, want)
	}
	return ""
}
