package tests

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestWatchCreatedHeaderUnderWrites opens watches from now while writers
// keep the revision moving: each created message's header is exactly
// start_revision - 1, the revision the stream is consistent with (as
// API.md says), never a later one, and X-Revision agrees (e2e.OpenWatch
// checks that).
func TestWatchCreatedHeaderUnderWrites(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	stop := make(chan struct{})
	var writers sync.WaitGroup
	for w := range 8 {
		writers.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r, err := s.Send(t.Context(), "PUT", e2e.KeyPath(fmt.Sprintf("w%d", w)), []byte(fmt.Sprint(i)))
				if err != nil || r.Status != http.StatusOK {
					t.Errorf("PUT w%d: %v %v", w, r, err)
					return
				}
			}
		})
	}
	defer func() { close(stop); writers.Wait() }()
	for i := range 100 {
		w := e2e.OpenWatch(t, s, "key=w&prefix=true")
		if got, start := w.Created.Header.Revision, w.Created.StartRevision; got != start-1 {
			t.Fatalf("watch %d from now: created header revision %d with start_revision %d, want %d", i, got, start, start-1)
		}
		w.Close()
	}
}
