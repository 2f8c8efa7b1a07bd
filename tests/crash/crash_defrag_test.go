package crash

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// write sends one recorded write that must be acknowledged.
func (m *crashModel) write(tb testing.TB, s *e2e.Server, method, key, value string) {
	tb.Helper()
	events := []string{"put " + key + "=" + value}
	body := []byte(value)
	if method == "DELETE" {
		events, body = []string{"del " + key}, nil
	}
	req := m.add(events)
	var res client.HeaderResponse
	s.Do(tb, method, e2e.KeyPath(key), body).Ok(tb, http.StatusOK, &res)
	m.ack(req, res.Header.Revision)
}

// defragPhase is how far a defrag had gone when the server was killed.
type defragPhase string

const (
	defragCopying  defragPhase = "copying"  // its new file was there, no answer yet
	defragStarting defragPhase = "starting" // no new file seen yet, no answer
	defragRenamed  defragPhase = "renamed"  // its new file came and went, no answer
	defragAnswered defragPhase = "answered"
)

// TestCrashInsideDefrag kills the server (SIGKILL) while it defragments
// about 12 MiB of live data out of a 25 MiB file, writers waiting on it,
// at a random moment of the copy (seen by the new file beside the data
// file) in each round, restarts it, and checks the whole readable
// history against what was written: every acknowledged write at its
// revision, every revision one whole request, every key's value; a
// defrag then completes. At least one round must land inside the copy.
func TestCrashInsideDefrag(t *testing.T) {
	t.Parallel()
	e2e.EmbeddedOnly(t, "it crashes the embedded store inside its defragmentation")
	rng := e2e.TestRand(t, "HTTPKV_CRASH_DEFRAG_SEED")
	s := e2e.StartServer(t, "--unsafe-no-fsync=false")
	tmp := filepath.Join(s.DataDir, "httpkv.db.defrag") // mvcc's copy in progress
	m := newCrashModel()

	// 100 values of 256 KiB, half of them deleted and compacted away:
	// the bytes of a long copy in few durable writes.
	const big = 100
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < big; i += 8 {
				key := fmt.Sprintf("big/%03d", i)
				m.write(t, s, "PUT", key, key+"#"+strings.Repeat("v", 256<<10))
			}
		})
	}
	wg.Wait()
	for w := range 8 {
		wg.Go(func() {
			for i := 2 * w; i < big; i += 16 {
				m.write(t, s, "DELETE", fmt.Sprintf("big/%03d", i), "")
			}
		})
	}
	wg.Wait()
	m.sync(t, s)
	s.Do(t, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d,"physical":true}`, m.top))).Want(t, http.StatusOK)

	// An uninterrupted defrag, to time its copy.
	start, stop := time.Now(), make(chan struct{})
	seen := watchFile(tmp, stop)
	s.Do(t, "POST", "/v1/defrag", nil).Want(t, http.StatusOK)
	close(stop)
	copyTime := time.Since(start)
	if at, ok := firstSeen(seen); ok {
		copyTime = time.Since(at)
	}
	t.Logf("a defrag of %d MiB took %v", s.Status(t).DbSize>>20, copyTime)

	phases := make(map[defragPhase]int)
	for round := range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		wait := startCrashWriters(ctx, t, s, m, fmt.Sprintf("d%d", round), 2, rng)
		writeAcked(t, s, m, fmt.Sprintf("d%d/pre", round), 2, 200, rng)

		stop := make(chan struct{})
		seen := watchFile(tmp, stop)
		answered := make(chan int, 1)
		go func() {
			r, err := s.Send(ctx, "POST", "/v1/defrag", nil)
			if err != nil {
				answered <- 0
				return
			}
			answered <- r.Status
		}()
		// Kill at a random moment of the copy, once its file is there.
		delay := time.Duration(rng.Int64N(int64(copyTime) + 1))
		var phase defragPhase
		select {
		case <-seen.appeared:
			time.Sleep(delay) // the random moment of the kill, not a wait for a condition
		case st := <-answered:
			answered <- st
		case <-time.After(time.Minute):
			t.Fatal("POST /v1/defrag: no new file and no answer within a minute")
		}
		s.Kill()
		close(stop)
		cancel()
		wait()
		st := <-answered
		_, present := os.Stat(tmp)
		switch {
		case st == http.StatusOK:
			phase = defragAnswered
		case st != 0:
			t.Fatalf("POST /v1/defrag = %d, want 200 or no answer", st)
		case present == nil:
			phase = defragCopying
		case seen.wasSeen():
			phase = defragRenamed
		default:
			phase = defragStarting
		}
		phases[phase]++
		t.Logf("round %d: killed %v into the copy: %s", round, delay, phase)

		s.Restart()
		m.sync(t, s)
		m.checkReadsAt(t, s, m.top)
		if t.Failed() {
			return
		}
		if _, err := os.Stat(tmp); err == nil {
			t.Errorf("round %d: the copy of the interrupted defrag (%s) is still there after the restart", round, tmp)
		}
		s.Do(t, "POST", "/v1/defrag", nil).Want(t, http.StatusOK)
		m.checkReadsAt(t, s, m.top)
	}
	t.Logf("phases of the kills: %v", phases)
	if phases[defragCopying] == 0 {
		t.Errorf("no round killed the server while it copied (phases %v): the kills missed the defrag", phases)
	}
}

// fileWatch reports when a file first appears.
type fileWatch struct {
	appeared chan struct{} // closed when the file is first seen
	mu       sync.Mutex
	at       time.Time
}

// watchFile polls for path every millisecond until stop is closed.
func watchFile(path string, stop <-chan struct{}) *fileWatch {
	w := &fileWatch{appeared: make(chan struct{})}
	go func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if _, err := os.Stat(path); err == nil {
				w.mu.Lock()
				w.at = time.Now()
				w.mu.Unlock()
				close(w.appeared)
				return
			}
		}
	}()
	return w
}

func (w *fileWatch) wasSeen() bool {
	select {
	case <-w.appeared:
		return true
	default:
		return false
	}
}

func firstSeen(w *fileWatch) (time.Time, bool) {
	if !w.wasSeen() {
		return time.Time{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.at, true
}
