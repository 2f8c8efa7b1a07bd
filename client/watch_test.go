package client

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// history is what a watch delivered: "rev key value" a line per event.
type history []string

func (h *history) add(evs []Event) {
	for _, ev := range evs {
		*h = append(*h, fmt.Sprintf("%d %s %s %s", ev.KV.ModRevision, ev.Type, ev.KV.Key, ev.KV.Value))
	}
}

// putMany puts keys prefix<from>..prefix<from+n-1> and returns their
// history. It writes around the proxy: a write on a connection the proxy
// just cut would fail, a PUT not being retried.
func putMany(t *testing.T, s *testServer, prefix string, from, n int) history {
	t.Helper()
	var want history
	for i := from; i < from+n; i++ {
		key, value := fmt.Sprintf("%s%d", prefix, i), fmt.Sprintf("v%d", i)
		put, err := s.direct.Put(context.Background(), key, []byte(value), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%d put %s %s", put.Header.Revision, key, value))
	}
	return want
}

func equalHistory(t *testing.T, what string, got, want history) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s delivered %d events, want %d:\ngot  %q\nwant %q", what, len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: event %d = %q, want %q\ngot  %q\nwant %q", what, i, got[i], want[i], got, want)
		}
	}
}

// TestWatchResumes: a watch whose connection is cut, twice, mid-stream
// and while idle, delivers every event once, in order.
func TestWatchResumes(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()

	want := putMany(t, s, "w/", 0, 50)
	retries := 0
	var got history
	for m, err := range c.Watch(ctx, Prefix("w/"), WatchOptions{StartRevision: 1, OnRetry: func(error) { retries++ }}) {
		if err != nil {
			if ctx.Err() != nil {
				break // canceled below, once done
			}
			t.Fatal(err)
		}
		if m.Type == "created" && len(got) > 0 {
			t.Fatalf("a second created message after %d events", len(got))
		}
		got.add(m.Events)
		switch len(got) {
		case 10:
			s.cut() // mid-way through the history
		case 50:
			s.cut() // idle, then new writes
			want = append(want, putMany(t, s, "w/", 50, 20)...)
		case 70:
			cancel()
		}
	}
	equalHistory(t, "Watch(w/)", got, want)
	if retries == 0 {
		t.Errorf("the watch never reconnected, though its connection was cut")
	}
}

// TestWatchCompacted: a watch from below the compact revision ends with
// a *CompactedError, which errors.Is finds as ErrCompacted.
func TestWatchCompacted(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	ctx := testContext(t)
	putMany(t, s, "c/", 0, 5)
	if _, err := c.Compact(ctx, 4, true); err != nil {
		t.Fatal(err)
	}
	var end error
	for _, err := range c.Watch(ctx, Prefix("c/"), WatchOptions{StartRevision: 2}) {
		if err != nil {
			end = err
			break
		}
	}
	var ce *CompactedError
	if !errors.As(end, &ce) || ce.CompactRevision != 4 || !errors.Is(end, ErrCompacted) {
		t.Fatalf("Watch(from 2, compacted at 4) ended with %v, want a *CompactedError at 4", end)
	}
	// History says the same, as an *Error.
	for _, err := range c.History(ctx, Prefix("c/"), HistoryOptions{StartRevision: 2}) {
		if !errors.Is(err, ErrCompacted) || !HasCode(err, CodeCompacted) {
			t.Fatalf("History(from 2) = %v, want compacted", err)
		}
	}
}

// TestWatchStreamResumes: a stream of many watchers whose connection is
// cut resumes by its cursor, and one whose server forgot it (a restart)
// is made again with every watcher from where it was; a watch added
// meanwhile and one canceled are as asked.
func TestWatchStreamResumes(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s)
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()

	wantA := putMany(t, s, "a/", 0, 10)
	ws, ids, err := c.NewWatchStream(ctx, nil, WatchRequest{Selector: Prefix("a/"), StartRevision: 1}, WatchRequest{Selector: Prefix("b/")})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close(context.Background())
	a, b := ids[0], ids[1]
	first := ws.id
	var c3 int64
	got := map[int64]*history{a: {}, b: {}}
	var wantB, wantC history
	created := map[int64]int{}
	for m, err := range ws.Messages(ctx) {
		if err != nil {
			if ctx.Err() != nil {
				break // canceled below, once done
			}
			t.Fatal(err)
		}
		switch m.Type {
		case "created":
			created[m.WatchID]++
			if m.WatchID == b {
				// Both are watching: write, and cut while it streams.
				wantA = append(wantA, putMany(t, s, "a/", 10, 5)...)
				wantB = putMany(t, s, "b/", 0, 5)
			}
			if m.WatchID == c3 {
				wantC = putMany(t, s, "c/", 0, 3)
				wantB = append(wantB, putMany(t, s, "b/", 5, 3)...)
			}
			continue
		case "canceled":
			if m.WatchID != a || m.Reason != "watch deleted" {
				t.Fatalf("canceled %+v, want watch %d deleted", m, a)
			}
			cancel()
			continue
		}
		got[m.WatchID].add(m.Events)
		switch {
		case m.WatchID == b && len(*got[b]) == 2:
			s.cut()
		case m.WatchID == b && len(*got[b]) == 5:
			// The server forgets the stream; a watch added meanwhile is
			// made with the others.
			s.restart()
			wantA = append(wantA, putMany(t, s, "a/", 15, 4)...)
			if c3, err = ws.Add(ctx, WatchRequest{Selector: Prefix("c/")}); err != nil {
				t.Fatal(err)
			}
			got[c3] = &history{}
		case m.WatchID == c3 && len(*got[c3]) == 3:
			if err := ws.Cancel(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	equalHistory(t, "watch a/", *got[a], wantA)
	equalHistory(t, "watch b/", *got[b], wantB)
	equalHistory(t, "watch c/", *got[c3], wantC)
	if ws.id == first {
		t.Errorf("the stream was not made again after the server forgot it")
	}
	for id, n := range created {
		if n != 1 {
			t.Errorf("watch %d: %d created messages, want 1", id, n)
		}
	}
}
