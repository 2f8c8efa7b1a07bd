package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	kvclient "github.com/httpkv/httpkv/client"

	"github.com/httpkv/httpkv/tests/e2e"
)

func eventLines(evs []kvclient.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, fmt.Sprintf("%d %s %s", ev.KV.ModRevision, ev.Type, ev.KV.Key))
	}
	return out
}

// TestGoWatchAcrossKill: client.Watch, from revision 1, of a history the
// server is killed (kill -9) in the middle of sending, then restarted
// and written to again, delivers every event once, in order.
func TestGoWatchAcrossKill(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	c := e2e.NewKVClient(t, s)
	want := e2e.PutEvents(t, c, "w/", 0, 300)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	retries := 0
	var got []string
	killed := false
	for m, err := range c.Watch(ctx, kvclient.Prefix("w/"), kvclient.WatchOptions{StartRevision: 1, OnRetry: func(error) { retries++ }}) {
		if err != nil {
			t.Fatalf("after %d events: %v", len(got), err)
		}
		got = append(got, eventLines(m.Events)...)
		if len(got) >= 20 && !killed {
			killed = true
			s.Kill()
			s.Restart()
			want = append(want, e2e.PutEvents(t, c, "w/", 300, 50)...)
		}
		if len(got) >= len(want) {
			break
		}
	}
	e2e.SameHistory(t, "Watch(w/) across kill -9", got, want)
	if retries == 0 {
		t.Errorf("the watch never reconnected")
	}
}

// TestGoWatchStreamAcrossKill: a client.WatchStream of two watchers,
// the server killed (kill -9) mid-stream and restarted, which forgets
// the stream: the helper makes it again, each watcher from where it
// was, and a watch added after the restart joins it; every watcher
// delivers its history once, in order.
func TestGoWatchStreamAcrossKill(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	c := e2e.NewKVClient(t, s)
	wantA := e2e.PutEvents(t, c, "a/", 0, 200)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ws, ids, err := c.NewWatchStream(ctx, nil,
		kvclient.WatchRequest{Selector: kvclient.Prefix("a/"), StartRevision: 1},
		kvclient.WatchRequest{Selector: kvclient.Prefix("b/")})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close(context.Background())
	a, b := ids[0], ids[1]
	var wantB, wantC []string
	got := map[int64][]string{}
	created := map[int64]int{}
	var added int64
	done := func() bool {
		return added != 0 && len(got[a]) >= len(wantA) && len(got[b]) >= len(wantB) && len(got[added]) >= len(wantC)
	}
	for m, err := range ws.Messages(ctx) {
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		if m.Type == "created" {
			created[m.WatchID]++
			if m.WatchID == b && created[b] == 1 {
				wantB = e2e.PutEvents(t, c, "b/", 0, 10)
			}
			continue
		}
		got[m.WatchID] = append(got[m.WatchID], eventLines(m.Events)...)
		if m.WatchID == a && len(got[a]) >= 20 && added == 0 {
			s.Kill()
			s.Restart()
			wantA = append(wantA, e2e.PutEvents(t, c, "a/", 200, 20)...)
			wantB = append(wantB, e2e.PutEvents(t, c, "b/", 10, 10)...)
			if added, err = ws.Add(ctx, kvclient.WatchRequest{Selector: kvclient.Prefix("c/"), StartRevision: 1}); err != nil {
				t.Fatal(err)
			}
			wantC = e2e.PutEvents(t, c, "c/", 0, 5)
		}
		if done() {
			break
		}
	}
	e2e.SameHistory(t, "watch a/", got[a], wantA)
	e2e.SameHistory(t, "watch b/", got[b], wantB)
	e2e.SameHistory(t, "watch c/", got[added], wantC)
	for id, n := range created {
		if n != 1 {
			t.Errorf("watch %d: %d created messages, want 1", id, n)
		}
	}
}
