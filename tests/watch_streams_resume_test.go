package tests

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestWatchStreamResume: a client that lost the end of what the server
// wrote reconnects with the id of the last message it received, and
// every watcher goes on right after it: those whose messages were lost
// get them again, a watcher added and one canceled while it was away are
// reported, and each ends up with exactly its history, without a gap or
// a duplicate. A reconnect that lost nothing, and one by the
// last_event_id query parameter, go on as well; a cursor the server never
// wrote answers 400, none for a stream read before answers 400, and a
// cursor of messages the server took back ends every watcher with
// canceled (cursor too old) and the stream with them.
func TestWatchStreamResume(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	specs := map[string]e2e.WatchSpec{
		"a": {Body: `{"key":"r/a/","prefix":true}`, History: "key=r/a/&prefix=true"},
		"b": {Body: `{"key":"r/b/","prefix":true,"filters":"nodelete"}`, History: "key=r/b/&prefix=true&filters=nodelete"},
		"c": {Body: `{"key":"r/c","prev_kv":true}`, History: "key=r/c&prev_kv=true"},
		"d": {Body: `{"key":"r/d/","prefix":true}`, History: "key=r/d/&prefix=true"},
	}
	stream, ids := s.CreateStream(t, `{"watches":[`+specs["a"].Body+`,`+specs["b"].Body+`,`+specs["c"].Body+`]}`)
	a, b, c := ids[0], ids[1], ids[2]
	spec := map[int64]e2e.WatchSpec{a: specs["a"], b: specs["b"], c: specs["c"]}
	write := func(round, n int) {
		for i := range n {
			switch i % 4 {
			case 0:
				s.Put(t, fmt.Sprintf("r/a/%d", i%3), fmt.Sprintf("%d-%d", round, i))
			case 1:
				s.Put(t, fmt.Sprintf("r/b/%d", i%2), fmt.Sprintf("%d-%d", round, i))
			case 2:
				s.Put(t, "r/c", fmt.Sprintf("%d-%d", round, i))
			case 3:
				s.Do(t, "DELETE", e2e.KeyPath(fmt.Sprintf("r/b/%d", i%2)), nil).Want(t, http.StatusOK)
			}
		}
	}
	// expect returns, for the watchers of spec, their history up to now.
	expect := func(l *streamLedger, skip ...int64) map[int64][]string {
		end := s.Status(t).Revision
		want := map[int64][]string{}
		for id, sp := range spec {
			if !slices.Contains(skip, id) {
				want[id] = s.Expected(t, sp, l.watcher(id).start, end)
			}
		}
		return want
	}

	first := openStream(t, s, stream, noCursor)
	seen := newStreamLedger(t)
	write(1, 24)
	all := seen.readUntil(first, e2e.WatchTimeout, seen.has(expect(seen)))
	first.Close()
	// The client received only the first half of it.
	cursor := all[len(all)/2].ID
	l := newStreamLedger(t)
	l.applyAll(all, cursor)

	// Meanwhile: more writes, a watcher added, one canceled.
	write(2, 12)
	d := s.AddWatch(t, stream, specs["d"].Body)
	spec[d] = specs["d"]
	s.Put(t, "r/d/1", "x")
	s.Do(t, "DELETE", fmt.Sprintf("/v1/watch/streams/%s/watches/%d", stream, c), nil).Want(t, http.StatusOK)

	second := openStream(t, s, stream, cursor)
	got := l.readUntil(second, e2e.WatchTimeout, func() bool { return l.has(expect(l, c))() && l.ended(c)() })
	l.wantEvents(expect(l, c))
	if w, full := l.watcher(c), s.Expected(t, spec[c], l.watcher(c).start, s.Status(t).Revision); w.final != "canceled: watch deleted" ||
		len(w.events) > len(full) || fmt.Sprint(w.events) != fmt.Sprint(full[:len(w.events)]) {
		t.Fatalf("watch %d canceled while away: %q then %q, want a beginning of %q then canceled", c, w.events, w.final, full)
	}
	delete(spec, c)
	second.Close()

	// Nothing lost: on from the last message received, by the query
	// parameter a new EventSource would use.
	last := got[len(got)-1].ID
	resp, r := requestStream(t, s, stream, noCursor)
	resp.Body.Close()
	r.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("GET of a stream read before, without Last-Event-ID = %d, want 400", resp.StatusCode)
	}
	for _, bad := range []int64{last + 1000} {
		resp, r := requestStream(t, s, stream, bad)
		resp.Body.Close()
		r.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("GET with Last-Event-ID %d, never written = %d, want 400", bad, resp.StatusCode)
		}
	}
	third := openStreamQuery(t, s, stream, "last_event_id="+strconv.FormatInt(last, 10))
	write(3, 8)
	l.readUntil(third, e2e.WatchTimeout, l.has(expect(l)))
	l.wantEvents(expect(l))
	third.Close()

	// A cursor of the messages the server took back on the second
	// connection: where each watcher stands for it is not known.
	retracted := all[len(all)-1].ID
	if retracted <= cursor {
		t.Fatalf("the first connection read up to id %d, not past the cursor %d", retracted, cursor)
	}
	fourth := openStream(t, s, stream, retracted)
	ended := newStreamLedger(t)
	for {
		m, err := fourth.nextOrEnd(e2e.WatchTimeout)
		if err != nil {
			break
		}
		if m.Kind != "canceled" || m.Reason != "cursor too old" {
			t.Fatalf("after a retracted cursor: %v, want canceled (cursor too old)", m)
		}
		ended.watcher(m.WatchID).final = m.Reason
	}
	for id := range spec {
		if ended.watcher(id).final != "cursor too old" {
			t.Errorf("watch %d was not ended after a retracted cursor", id)
		}
	}
	s.Do(t, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"x"}`)).WantError(t, http.StatusNotFound, "stream_not_found")
}

// openStreamQuery reads a stream with a query string instead of headers.
func openStreamQuery(tb testing.TB, s *e2e.Server, stream, query string) *streamReader {
	tb.Helper()
	return openStream(tb, s, stream+"?"+query, noCursor)
}
