package tests

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// streamAlive reports whether a stream exists, without connecting to it:
// canceling a watch it never had answers watch_not_found while it does,
// stream_not_found once it is gone.
func streamAlive(tb testing.TB, s *e2e.Server, stream string) bool {
	tb.Helper()
	r := s.Do(tb, "DELETE", "/v1/watch/streams/"+stream+"/watches/999999", nil)
	var e client.ErrorResponse
	r.Decode(tb, &e)
	switch e.Error.Code {
	case "watch_not_found":
		return true
	case "stream_not_found":
		return false
	}
	tb.Fatalf("%s = %s, want watch_not_found or stream_not_found", r.Req, r.Body)
	return false
}

// TestWatchStreamIdleExpiry: with --watch-stream-idle-timeout=1s, a
// stream that is read stays however long it is read, and one without a
// connection, never read or no longer, is dropped: then it answers 404.
func TestWatchStreamIdleExpiry(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--watch-stream-idle-timeout=1s")
	never, _ := s.CreateStream(t, "")
	read, ids := s.CreateStream(t, `{"watches":[{"key":"e"}]}`)
	r := openStream(t, s, read, noCursor)
	l := newStreamLedger(t)
	l.readUntil(r, e2e.WatchTimeout, func() bool { return l.watcher(ids[0]).created })
	deadline := time.Now().Add(e2e.WatchTimeout)
	for streamAlive(t, s, never) {
		if time.Now().After(deadline) {
			t.Fatalf("a stream never read is still there after %v", e2e.WatchTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Read for three timeouts: it stays.
	for range 3 {
		rev := s.Put(t, "e", "v")
		l.readUntil(r, e2e.WatchTimeout, func() bool { return l.watcher(ids[0]).lastRev == rev })
		time.Sleep(time.Second)
	}
	if !streamAlive(t, s, read) {
		t.Fatal("a stream being read was dropped")
	}
	r.Close()
	deadline = time.Now().Add(e2e.WatchTimeout)
	for streamAlive(t, s, read) {
		if time.Now().After(deadline) {
			t.Fatalf("a stream left without a connection is still there after %v", e2e.WatchTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, rr := requestStream(t, s, read, l.watcher(ids[0]).lastRev)
	resp.Body.Close()
	rr.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET of a dropped stream = %d, want 404", resp.StatusCode)
	}
}

// TestWatchStreamLimits: past --max-watchers-per-stream a stream takes no
// more watchers, and past --max-watch-streams-per-user a client gets no
// more streams (429, naming the flag), until it cancels or deletes one;
// with auth off that bound is per client address.
func TestWatchStreamLimits(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-watchers-per-stream=3", "--max-watch-streams-per-user=2")
	four := `{"watches":[{"key":"a"},{"key":"b"},{"key":"c"},{"key":"d"}]}`
	e := s.Do(t, "POST", "/v1/watch/streams", []byte(four), "Content-Type", "application/json").WantError(t, http.StatusTooManyRequests, "too_many_requests")
	if !strings.Contains(e.Message, "--max-watchers-per-stream") {
		t.Errorf("429 for too many watchers says %q, want the flag named", e.Message)
	}
	stream, ids := s.CreateStream(t, `{"watches":[{"key":"a"},{"key":"b"},{"key":"c"}]}`)
	s.Do(t, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"d"}`)).WantError(t, http.StatusTooManyRequests, "too_many_requests")
	s.Do(t, "DELETE", fmt.Sprintf("/v1/watch/streams/%s/watches/%d", stream, ids[0]), nil).Want(t, http.StatusOK)
	s.Do(t, "DELETE", fmt.Sprintf("/v1/watch/streams/%s/watches/%d", stream, ids[0]), nil).WantError(t, http.StatusNotFound, "watch_not_found")
	s.AddWatch(t, stream, `{"key":"d"}`)

	other, _ := s.CreateStream(t, "")
	e = s.Do(t, "POST", "/v1/watch/streams", nil).WantError(t, http.StatusTooManyRequests, "too_many_requests")
	if !strings.Contains(e.Message, "--max-watch-streams-per-user") {
		t.Errorf("429 for too many streams says %q, want the flag named", e.Message)
	}
	// With auth off, the bound is per client address.
	s.From("127.0.0.2").CreateStream(t, "")
	s.Do(t, "DELETE", "/v1/watch/streams/"+other, nil).Want(t, http.StatusOK)
	s.CreateStream(t, "{}")
}

// TestWatchStreamStalledReader: with --watch-stream-buffer-bytes=64KiB, a
// client (with a small receive buffer) that stops reading while 10
// watchers get 64 KiB of events each at a time, until the socket's
// buffers are full, makes the stream hold no more than that: its
// watchers are parked (httpkv_watch_stream_parks_total), and catch up
// from history once the client reads again. Each still gets exactly its
// history.
func TestWatchStreamStalledReader(t *testing.T) {
	t.Parallel()
	// The reader stalls while the writes go on until watchers are
	// parked: longer than 30 s on a loaded machine.
	s := e2e.StartServer(t, "--watch-stream-buffer-bytes=65536", fmt.Sprintf("--write-timeout=%v", e2e.StalledWriteTimeout))
	var bodies []string
	for range 10 {
		bodies = append(bodies, `{"key":"s/","prefix":true}`)
	}
	stream, ids := s.CreateStream(t, `{"watches":[`+strings.Join(bodies, ",")+`]}`)
	r := openStream(t, s.WithSmallReceiveBuffer(), stream, noCursor)
	l := newStreamLedger(t)
	l.readUntil(r, e2e.WatchTimeout, func() bool { return l.watcher(ids[len(ids)-1]).created })
	// The test stops reading: the connection's buffers fill, then the
	// stream's, and watchers are parked. Write until they are.
	value := strings.Repeat("v", 1<<10)
	for i := 0; s.Metric(t, "httpkv_watch_stream_parks_total") == 0; i++ {
		if i == 512 {
			t.Fatal("httpkv_watch_stream_parks_total = 0 after 40 MiB for a reader that does not read: no watcher had to catch up from history")
		}
		for range 8 {
			var ops []string
			for k := range 8 {
				ops = append(ops, fmt.Sprintf(`{"put":{"key":"s/%d","value":"%d-%s"}}`, k, i, value))
			}
			s.Txn(t, `{"success":[`+strings.Join(ops, ",")+`]}`).Want(t, http.StatusOK)
		}
	}
	end := s.Status(t).Revision
	history := s.Expected(t, e2e.WatchSpec{History: "key=s/&prefix=true"}, l.watcher(ids[0]).start, end)
	want := map[int64][]string{}
	for _, id := range ids {
		want[id] = history
	}
	l.readUntil(r, e2e.WatchTimeout, l.has(want))
	l.wantEvents(want)
}

// TestWatchStreamCursorTooOld: with --watch-stream-resume-bytes=1 the
// server remembers nothing of what it wrote: a reconnect right after the
// last message received resumes, one from an older message ends every
// watcher with canceled (cursor too old), and the stream with them.
func TestWatchStreamCursorTooOld(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--watch-stream-resume-bytes=1")
	stream, ids := s.CreateStream(t, `{"watches":[{"key":"o/","prefix":true},{"key":"o/1"}]}`)
	r := openStream(t, s, stream, noCursor)
	l := newStreamLedger(t)
	var last int64
	for i := range 4 {
		last = s.Put(t, fmt.Sprintf("o/%d", i%2), "v")
	}
	// Both watchers see the last put (o/1): read until both have it, so
	// that the last id received is the last one the server wrote, which
	// is all a resume bound of one byte lets it resume from.
	got := l.readUntil(r, e2e.WatchTimeout, func() bool {
		return l.watcher(ids[0]).lastRev == last && l.watcher(ids[1]).lastRev == last
	})
	r.Close()

	// The put comes once the client is back: one made before could be
	// written to the closed connection before the server notices it is
	// gone, and a bound of one byte then remembers too little to resume.
	r = openStream(t, s, stream, got[len(got)-1].ID)
	rev := s.Put(t, "o/1", "after")
	want := map[int64][]string{ids[0]: {fmt.Sprintf("put o/1=after@%d", rev)}, ids[1]: {fmt.Sprintf("put o/1=after@%d", rev)}}
	l2 := newStreamLedger(t)
	for _, id := range ids {
		l2.watcher(id).created = true
	}
	l2.readUntil(r, e2e.WatchTimeout, l2.has(want))
	l2.wantEvents(want)
	r.Close()

	old := openStream(t, s, stream, got[0].ID)
	l3 := newStreamLedger(t)
	for _, id := range ids {
		l3.watcher(id).created = true
	}
	l3.readUntil(old, e2e.WatchTimeout, l3.ended(ids...))
	for _, id := range ids {
		if f := l3.watcher(id).final; f != "canceled: cursor too old" {
			t.Errorf("watch %d after a cursor too old: %q, want canceled: cursor too old", id, f)
		}
	}
	old.wantEnd(e2e.WatchTimeout)
	if streamAlive(t, s, stream) {
		t.Fatal("the stream is still there after a cursor too old")
	}
}
