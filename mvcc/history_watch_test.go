package mvcc_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/watch"
)

// TestHistoryPageMatchesWatch writes a random history through the watch
// store, compacts it part way, and checks that the history of each range,
// read page by page, is exactly what a watch of that range from the same
// start revision delivers up to the current revision: same events, same
// order, same previous versions, at the compact revision too.
func TestHistoryPageMatchesWatch(t *testing.T) {
	kval, err := mvcc.Open(filepath.Join(t.TempDir(), "db"), nil, nil, mvcc.Options{NoFsync: true})
	if err != nil {
		t.Fatalf("mvcc.Open: %v", err)
	}
	// Writes go to the store, whose commits reach the watch store.
	ws, err := mvcc.Observe(kval, func(rev int64) *watch.Store { return watch.New(kval, rev, watch.Options{}) })
	if err != nil {
		t.Fatalf("mvcc.Observe: %v", err)
	}
	t.Cleanup(func() {
		ws.Close()
		if err := kval.Close(); err != nil {
			t.Errorf("mvcc Close: %v", err)
		}
	})
	rng := rand.New(rand.NewPCG(3, 4))
	keys := []string{"a", "a/1", "a/2", "b", "c\xff"}
	write := func(n int) {
		for range n {
			k := []byte(keys[rng.IntN(len(keys))])
			var err error
			switch rng.IntN(6) {
			case 0:
				_, err = kval.DeleteRange(kv.DeleteRequest{Key: k})
			case 1:
				_, err = kval.DeleteRange(kv.DeleteRequest{Key: []byte("a"), End: []byte("b")})
			case 2:
				_, err = kval.Txn(kv.TxnRequest{Success: []kv.Op{
					{Put: &kv.PutRequest{Key: []byte("b"), Value: []byte("txn")}},
					{Put: &kv.PutRequest{Key: []byte("a/2"), Value: []byte("txn")}},
				}})
			default:
				_, err = kval.Put(kv.PutRequest{Key: k, Value: fmt.Append(nil, rng.IntN(100))})
			}
			if err != nil {
				t.Fatalf("write: %v", err)
			}
		}
	}
	write(80)
	// Compact at a delete, whose tombstone both must still report.
	if _, err := kval.Put(kv.PutRequest{Key: []byte("a/1"), Value: []byte("doomed")}); err != nil {
		t.Fatal(err)
	}
	del, err := kval.DeleteRange(kv.DeleteRequest{Key: []byte("a/1")})
	if err != nil {
		t.Fatal(err)
	}
	compact := del.Revision
	if _, err := kval.Compact(compact); err != nil {
		t.Fatalf("Compact(%d) = %v", compact, err)
	}
	write(40)
	cur := kval.Rev()

	ranges := []struct{ key, end string }{{"a", ""}, {"a/2", ""}, {"a", "b"}, {"b", "\x00"}, {"\x00", "\x00"}}
	for _, r := range ranges {
		for _, start := range []int64{compact, compact + 1, cur - 5} {
			for flags := range 8 {
				req := kv.WatchRequest{Key: []byte(r.key), StartRevision: start,
					PrevKV: flags&1 != 0, NoPut: flags&2 != 0, NoDelete: flags&4 != 0}
				if r.end != "" {
					req.End = []byte(r.end)
				}
				if req.PrevKV && start == compact {
					// A watch with prev_kv ends, compacted, at an event
					// whose previous version the compaction took; history
					// leaves that prev_kv out instead (as etcd's watch
					// does): compared in TestHistoryPageCompaction.
					continue
				}
				want := watchEvents(t, ws, req, cur)
				q := kv.HistoryRequest{Key: req.Key, End: req.End, StartRevision: start,
					PrevKV: req.PrevKV, NoPut: req.NoPut, NoDelete: req.NoDelete, Limit: 1 + rng.IntN(4)}
				got := historyEvents(t, kval, q)
				if !slices.Equal(got, want) {
					t.Errorf("history of %q..%q from %d (prev_kv=%v noput=%v nodelete=%v) differs from the watch:\n got %q\nwant %q",
						r.key, r.end, start, req.PrevKV, req.NoPut, req.NoDelete, got, want)
				}
				q.Descend, q.Resume = true, kv.Revision{}
				desc := historyEvents(t, kval, q)
				slices.Reverse(desc)
				if !slices.Equal(desc, want) {
					t.Errorf("descending history of %q..%q from %d, reversed, differs from the watch:\n got %q\nwant %q", r.key, r.end, start, desc, want)
				}
			}
		}
	}
}

// showWatchEvent is an event with its previous version, all fields.
func showWatchEvent(ev kv.Event, prev *kv.KeyValue) string {
	s := fmt.Sprintf("%v %q=%q c%d m%d v%d l%d", ev.Type, ev.KV.Key, ev.KV.Value, ev.KV.CreateRevision, ev.KV.ModRevision, ev.KV.Version, ev.KV.Lease)
	if prev != nil {
		s += fmt.Sprintf(" prev %q=%q m%d v%d", prev.Key, prev.Value, prev.ModRevision, prev.Version)
	}
	return s
}

// watchEvents watches req and returns every event it delivers up to rev,
// the store's current revision: a progress bookmark at rev or later says
// that all of them have come.
func watchEvents(tb testing.TB, ws *watch.Store, req kv.WatchRequest, rev int64) []string {
	tb.Helper()
	st, err := ws.Watch(req)
	if err != nil {
		tb.Fatalf("Watch(%+v) = %v", req, err)
	}
	defer st.Close()
	st.RequestProgress()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	for {
		rs, err := st.Recv(ctx)
		if err != nil || rs == nil {
			tb.Fatalf("Watch(%+v).Recv() = %v after %d events, want a progress at %d", req, err, len(out), rev)
		}
		for _, r := range rs {
			switch {
			case r.CompactRevision != 0 || r.Canceled:
				tb.Fatalf("Watch(%+v) ended: %+v", req, r)
			case r.Progress && r.Revision >= rev:
				return out
			}
			for _, ev := range r.Events {
				out = append(out, showWatchEvent(ev, ev.PrevKV))
			}
		}
	}
}

// historyEvents reads q page by page to its end.
func historyEvents(tb testing.TB, kval *mvcc.Store, q kv.HistoryRequest) []string {
	tb.Helper()
	var out []string
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			tb.Fatalf("HistoryPage(%+v): more than 10000 pages", q)
		}
		page, err := kval.HistoryPage(q)
		if err != nil {
			tb.Fatalf("HistoryPage(%+v) = %v", q, err)
		}
		for _, ev := range page.Events {
			out = append(out, showWatchEvent(ev, ev.PrevKV))
		}
		if !page.More {
			return out
		}
		q.StartRevision, q.EndRevision, q.Resume = page.StartRevision, page.EndRevision, page.Next
	}
}
