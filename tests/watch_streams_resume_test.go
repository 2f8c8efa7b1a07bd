package tests

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
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
	s := startServer(t)
	specs := map[string]watchSpec{
		"a": {`{"key":"r/a/","prefix":true}`, "key=r/a/&prefix=true"},
		"b": {`{"key":"r/b/","prefix":true,"filters":"nodelete"}`, "key=r/b/&prefix=true&filters=nodelete"},
		"c": {`{"key":"r/c","prev_kv":true}`, "key=r/c&prev_kv=true"},
		"d": {`{"key":"r/d/","prefix":true}`, "key=r/d/&prefix=true"},
	}
	stream, ids := s.createStream(t, `{"watches":[`+specs["a"].body+`,`+specs["b"].body+`,`+specs["c"].body+`]}`)
	a, b, c := ids[0], ids[1], ids[2]
	spec := map[int64]watchSpec{a: specs["a"], b: specs["b"], c: specs["c"]}
	write := func(round, n int) {
		for i := range n {
			switch i % 4 {
			case 0:
				s.put(t, fmt.Sprintf("r/a/%d", i%3), fmt.Sprintf("%d-%d", round, i))
			case 1:
				s.put(t, fmt.Sprintf("r/b/%d", i%2), fmt.Sprintf("%d-%d", round, i))
			case 2:
				s.put(t, "r/c", fmt.Sprintf("%d-%d", round, i))
			case 3:
				s.do(t, "DELETE", keyPath(fmt.Sprintf("r/b/%d", i%2)), nil).want(t, http.StatusOK)
			}
		}
	}
	// expect returns, for the watchers of spec, their history up to now.
	expect := func(l *streamLedger, skip ...int64) map[int64][]string {
		end := s.status(t).Revision
		want := map[int64][]string{}
		for id, sp := range spec {
			if !slices.Contains(skip, id) {
				want[id] = s.expected(t, sp, l.watcher(id).start, end)
			}
		}
		return want
	}

	first := openStream(t, s, stream, noCursor)
	seen := newStreamLedger(t)
	write(1, 24)
	all := seen.readUntil(first, watchTimeout, seen.has(expect(seen)))
	first.close()
	// The client received only the first half of it.
	cursor := all[len(all)/2].ID
	l := newStreamLedger(t)
	l.applyAll(all, cursor)

	// Meanwhile: more writes, a watcher added, one canceled.
	write(2, 12)
	d := s.addWatch(t, stream, specs["d"].body)
	spec[d] = specs["d"]
	s.put(t, "r/d/1", "x")
	s.do(t, "DELETE", fmt.Sprintf("/v1/watch/streams/%s/watches/%d", stream, c), nil).want(t, http.StatusOK)

	second := openStream(t, s, stream, cursor)
	got := l.readUntil(second, watchTimeout, func() bool { return l.has(expect(l, c))() && l.ended(c)() })
	l.wantEvents(expect(l, c))
	if w, full := l.watcher(c), s.expected(t, spec[c], l.watcher(c).start, s.status(t).Revision); w.final != "canceled: watch deleted" ||
		len(w.events) > len(full) || fmt.Sprint(w.events) != fmt.Sprint(full[:len(w.events)]) {
		t.Fatalf("watch %d canceled while away: %q then %q, want a beginning of %q then canceled", c, w.events, w.final, full)
	}
	delete(spec, c)
	second.close()

	// Nothing lost: on from the last message received, by the query
	// parameter a new EventSource would use.
	last := got[len(got)-1].ID
	resp, r := requestStream(t, s, stream, noCursor)
	resp.Body.Close()
	r.close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("GET of a stream read before, without Last-Event-ID = %d, want 400", resp.StatusCode)
	}
	for _, bad := range []int64{last + 1000} {
		resp, r := requestStream(t, s, stream, bad)
		resp.Body.Close()
		r.close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("GET with Last-Event-ID %d, never written = %d, want 400", bad, resp.StatusCode)
		}
	}
	third := openStreamQuery(t, s, stream, "last_event_id="+strconv.FormatInt(last, 10))
	write(3, 8)
	l.readUntil(third, watchTimeout, l.has(expect(l)))
	l.wantEvents(expect(l))
	third.close()

	// A cursor of the messages the server took back on the second
	// connection: where each watcher stands for it is not known.
	retracted := all[len(all)-1].ID
	if retracted <= cursor {
		t.Fatalf("the first connection read up to id %d, not past the cursor %d", retracted, cursor)
	}
	fourth := openStream(t, s, stream, retracted)
	ended := newStreamLedger(t)
	for {
		m, err := fourth.nextOrEnd(watchTimeout)
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
	s.do(t, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"x"}`)).wantError(t, http.StatusNotFound, "stream_not_found")
}

// openStreamQuery reads a stream with a query string instead of headers.
func openStreamQuery(tb testing.TB, s *server, stream, query string) *streamReader {
	tb.Helper()
	return openStream(tb, s, stream+"?"+query, noCursor)
}
