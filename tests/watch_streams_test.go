package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// streamSpecs are watches of every kind over the keys m/<i>/<j>
// (i, j in 0..9): prefixes, single keys, a range, from a key, every key,
// with previous versions, with each filter.
func streamSpecs() []e2e.WatchSpec {
	var specs []e2e.WatchSpec
	for i := range 10 {
		specs = append(specs,
			e2e.WatchSpec{Body: fmt.Sprintf(`{"key":"m/%d/","prefix":true}`, i), History: fmt.Sprintf("key=m/%d/&prefix=true", i)},
			e2e.WatchSpec{Body: fmt.Sprintf(`{"key":"m/%d/0"}`, i), History: fmt.Sprintf("key=m/%d/0", i)})
	}
	return append(specs,
		e2e.WatchSpec{Body: `{"key":"m/2/","range_end":"m/5/"}`, History: "key=m/2/&range_end=m/5/"},
		e2e.WatchSpec{Body: `{"key":"m/7/","from_key":true}`, History: "key=m/7/&from_key=true"},
		e2e.WatchSpec{Body: `{}`, History: ""},
		e2e.WatchSpec{Body: `{"key":"m/3/","prefix":true,"prev_kv":true}`, History: "key=m/3/&prefix=true&prev_kv=true"},
		e2e.WatchSpec{Body: `{"key":"m/4/","prefix":true,"filters":"nodelete"}`, History: "key=m/4/&prefix=true&filters=nodelete"},
		e2e.WatchSpec{Body: `{"key":"m/5/","prefix":true,"filters":"noput","progress_notify":true}`, History: "key=m/5/&prefix=true&filters=noput"},
	)
}

// writeRandomly has writers put, delete and txn keys m/<i>/<j> at once,
// ops times each, and returns the first failure.
func writeRandomly(s *e2e.Server, writers, ops int, seed uint64) error {
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for wr := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(wr)))
			key := func() string { return fmt.Sprintf("m/%d/%d", rng.IntN(10), rng.IntN(10)) }
			for op := range ops {
				var r *e2e.Reply
				var err error
				switch rng.IntN(10) {
				case 0, 1:
					r, err = s.Send(context.Background(), "DELETE", e2e.KeyPath(key()), nil)
				case 2:
					doc := fmt.Sprintf(`{"success":[{"put":{"key":%q,"value":"t%d-%d"}},{"put":{"key":%q,"value":"t%d-%d"}}]}`,
						key(), wr, op, fmt.Sprintf("m/%d/x%d", rng.IntN(10), wr), wr, op)
					r, err = s.Send(context.Background(), "POST", "/v1/txn", []byte(doc), "Content-Type", "application/json")
				default:
					r, err = s.Send(context.Background(), "PUT", e2e.KeyPath(key()), fmt.Appendf(nil, "w%d-%d", wr, op))
				}
				if err == nil && r.Status != http.StatusOK {
					err = fmt.Errorf("%s = %d %s", r.Req, r.Status, r.Body)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// TestWatchStreamManyWatchers: one stream carries watchers of every kind,
// some from the past, some added while four writers put, delete and txn
// at once, some canceled meanwhile. Each watcher receives exactly the
// history of its range from its start (GET /v1/history says what that
// is), in order, each revision whole, without a gap or a duplicate; a
// canceled one receives a beginning of it, then canceled, then nothing.
func TestWatchStreamManyWatchers(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	for i := range 30 {
		s.Put(t, fmt.Sprintf("m/%d/%d", i%10, i%7), fmt.Sprintf("seed%d", i))
	}
	specs := streamSpecs()
	// Half at the start, from revision 2 or from now.
	first := specs[:len(specs)/2]
	var bodies []string
	for i, sp := range first {
		if i%3 == 0 {
			first[i] = sp.From(2)
		}
		bodies = append(bodies, first[i].Body)
	}
	stream, ids := s.CreateStream(t, `{"watches":[`+strings.Join(bodies, ",")+`]}`)
	if len(ids) != len(first) {
		t.Fatalf("created %d watches, want %d", len(ids), len(first))
	}
	specOf := map[int64]e2e.WatchSpec{}
	for i, id := range ids {
		specOf[id] = first[i]
	}
	r := openStream(t, s, stream, noCursor)
	l := newStreamLedger(t)

	done := make(chan error, 1)
	go func() { done <- writeRandomly(s, 4, 150, 1) }()
	// The other half while they write: every other one from revision 10.
	for i, sp := range specs[len(specs)/2:] {
		if i%2 == 1 {
			sp = sp.From(10)
		}
		specOf[s.AddWatch(t, stream, sp.Body)] = sp
	}
	canceled := []int64{ids[1], ids[4], ids[7]}
	for _, id := range canceled {
		s.Do(t, "DELETE", fmt.Sprintf("/v1/watch/streams/%s/watches/%d", stream, id), nil).Want(t, http.StatusOK)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	end := s.Status(t).Revision

	l.readUntil(r, e2e.WatchTimeout, l.ended(canceled...))
	want := map[int64][]string{}
	for id, sp := range specOf {
		w := l.watcher(id)
		if !w.created {
			l.readUntil(r, e2e.WatchTimeout, func() bool { return l.watcher(id).created })
		}
		want[id] = s.Expected(t, sp, w.start, end)
	}
	for _, id := range canceled {
		w, full := l.watcher(id), want[id]
		if w.final != "canceled: watch deleted" || len(w.events) > len(full) || strings.Join(w.events, "\n") != strings.Join(full[:len(w.events)], "\n") {
			t.Errorf("canceled watch %d: %d events and %q, want a beginning of its %d events, then canceled (watch deleted)", id, len(w.events), w.final, len(full))
		}
		delete(want, id)
	}
	l.readUntil(r, e2e.WatchTimeout, l.has(want))
	l.wantEvents(want)
	n := 0
	for _, evs := range want {
		n += len(evs)
	}
	t.Logf("%d watchers received %d events up to revision %d", len(want), n, end)
}

// TestWatchStreamCompactedOneWatcher: a watcher that needs history below
// the compact revision ends with compacted, alone: the others of its
// stream go on, and one starting exactly at the compact revision gets
// that revision's events.
func TestWatchStreamCompactedOneWatcher(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	for i := range 5 {
		s.Put(t, "c/k", fmt.Sprint(i))
	}
	compactAt := s.Put(t, "c/k", "at")
	s.Put(t, "c/k", "after")
	s.Do(t, "POST", "/v1/compact", fmt.Appendf(nil, `{"revision":%d}`, compactAt), "Content-Type", "application/json").Want(t, http.StatusOK)

	stream, ids := s.CreateStream(t, `{"watches":[{"key":"c/","prefix":true}]}`)
	live := ids[0]
	r := openStream(t, s, stream, noCursor)
	l := newStreamLedger(t)
	gone := s.AddWatch(t, stream, `{"key":"c/k","start_revision":2}`)
	at := s.AddWatch(t, stream, fmt.Sprintf(`{"key":"c/k","start_revision":%d}`, compactAt))
	l.readUntil(r, e2e.WatchTimeout, l.ended(gone))
	if w := l.watcher(gone); w.final != "compacted" || len(w.events) != 0 {
		t.Fatalf("watch from revision 2 below the compact revision %d: %d events, final %q, want compacted", compactAt, len(w.events), w.final)
	}
	rev := s.Put(t, "c/k", "later")
	want := map[int64][]string{
		live: {fmt.Sprintf("put c/k=later@%d", rev)},
		at:   {fmt.Sprintf("put c/k=at@%d", compactAt), fmt.Sprintf("put c/k=after@%d", compactAt+1), fmt.Sprintf("put c/k=later@%d", rev)},
	}
	l.readUntil(r, e2e.WatchTimeout, l.has(want))
	l.wantEvents(want)
	if l.watcher(live).final != "" || l.watcher(at).final != "" {
		t.Fatalf("the other watchers ended with the compacted one:\n%s", l)
	}
}

// TestWatchStreamTakeOverAndDelete: a second GET of a stream takes it
// over and the first connection ends; deleting the stream ends every
// watcher with canceled (stream deleted), then the connection, and the
// stream answers 404 from then on.
func TestWatchStreamTakeOverAndDelete(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	stream, ids := s.CreateStream(t, `{"watches":[{"key":"t/a"},{"key":"t/b"}]}`)
	first := openStream(t, s, stream, noCursor)
	l := newStreamLedger(t)
	got := l.readUntil(first, e2e.WatchTimeout, func() bool { return l.watcher(ids[0]).created && l.watcher(ids[1]).created })
	second := openStream(t, s, stream, got[len(got)-1].ID)
	first.wantEnd(e2e.WatchTimeout)

	rev := s.Put(t, "t/a", "1")
	want := map[int64][]string{ids[0]: {fmt.Sprintf("put t/a=1@%d", rev)}}
	l.readUntil(second, e2e.WatchTimeout, l.has(want))
	l.wantEvents(want)

	s.Do(t, "DELETE", "/v1/watch/streams/"+stream, nil).Want(t, http.StatusOK)
	l.readUntil(second, e2e.WatchTimeout, l.ended(ids...))
	for _, id := range ids {
		if w := l.watcher(id); w.final != "canceled: stream deleted" {
			t.Errorf("watch %d ended with %q, want canceled: stream deleted", id, w.final)
		}
	}
	second.wantEnd(e2e.WatchTimeout)
	resp, r := requestStream(t, s, stream, noCursor)
	resp.Body.Close()
	r.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET of a deleted stream = %d, want 404", resp.StatusCode)
	}
	s.Do(t, "DELETE", "/v1/watch/streams/"+stream, nil).WantError(t, http.StatusNotFound, "stream_not_found")
	s.Do(t, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"x"}`)).WantError(t, http.StatusNotFound, "stream_not_found")
}

// TestWatchStreamShutdown: on SIGTERM the server ends every watcher of a
// stream being read with canceled (shutting down), then the connection,
// and exits cleanly. Over etcd the stream is the deployment's: the
// connection ends, the watchers go on, and the client resumes them
// through a gateway (here the same one, restarted) with its last id.
func TestWatchStreamShutdown(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	stream, ids := s.CreateStream(t, `{"watches":[{"key":"x"},{"key":"y","prefix":true}]}`)
	r := openStream(t, s, stream, noCursor)
	l := newStreamLedger(t)
	l.readUntil(r, e2e.WatchTimeout, func() bool { return l.watcher(ids[0]).created && l.watcher(ids[1]).created })
	if e2e.OnEtcd(t) {
		s.Stop()
		r.wantEnd(e2e.WatchTimeout)
		s.Restart()
		resumed := openStream(t, s, stream, noCursor, "Last-Event-ID", r.lastText)
		rev := s.Put(t, "y/1", "v")
		l.readUntil(resumed, e2e.WatchTimeout, func() bool { return l.watcher(ids[1]).lastRev == rev })
		return
	}
	// What the server writes before it exits waits in the connection.
	s.Stop()
	l.readUntil(r, e2e.WatchTimeout, l.ended(ids...))
	for _, id := range ids {
		if got := l.watcher(id).final; got != "canceled: shutting down" {
			t.Errorf("watch %d at shutdown: %q, want canceled: shutting down", id, got)
		}
	}
	r.wantEnd(e2e.WatchTimeout)
}
