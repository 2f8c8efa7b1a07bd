package mvcc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// historyLog records every event written to a store with the key's
// version before it, as the reference history pages are checked against.
type historyLog struct {
	events []kv.Event
	state  map[string]kv.KeyValue
}

func newHistoryLog() *historyLog { return &historyLog{state: make(map[string]kv.KeyValue)} }

// write runs fn in one write request and records its events. Each event's
// previous version is the key at the revision before: every event of one
// revision sees the state before that revision, as a watch's prev_kv does.
func (l *historyLog) write(tb testing.TB, s *Store, fn func(*WriteTxn) error) int64 {
	tb.Helper()
	ch, err := s.Write(fn)
	if err != nil {
		tb.Fatalf("Write() = %v, want nil", err)
	}
	for _, ev := range ch.Events {
		he := ev
		if prev, ok := l.state[string(ev.KV.Key)]; ok {
			he.PrevKV = &prev
		}
		l.events = append(l.events, he)
	}
	for _, ev := range ch.Events {
		if ev.Type == kv.EventDelete {
			delete(l.state, string(ev.KV.Key))
		} else {
			l.state[string(ev.KV.Key)] = ev.KV
		}
	}
	return ch.Revision
}

func (l *historyLog) put(tb testing.TB, s *Store, key, value string) int64 {
	tb.Helper()
	return l.write(tb, s, func(tx *WriteTxn) error {
		_, err := tx.Put(kv.PutRequest{Key: []byte(key), Value: []byte(value)})
		return err
	})
}

func (l *historyLog) del(tb testing.TB, s *Store, key, end string) int64 {
	tb.Helper()
	return l.write(tb, s, func(tx *WriteTxn) error {
		_, err := tx.DeleteRange(kv.DeleteRequest{Key: []byte(key), End: []byte(end)})
		return err
	})
}

// want returns what a history read of q should return, over every page,
// from a store compacted at compact whose window is [start, end].
func (l *historyLog) want(q kv.HistoryRequest, compact, start, end int64) []kv.Event {
	var out []kv.Event
	for _, ev := range l.events {
		rev := ev.KV.ModRevision
		if rev < start || rev > end || !(keyrange.Range{Key: q.Key, End: q.End}).Contains(ev.KV.Key) ||
			ev.Type == kv.EventPut && q.NoPut || ev.Type == kv.EventDelete && q.NoDelete {
			continue
		}
		if !q.PrevKV || rev-1 < compact {
			ev.PrevKV = nil
		}
		out = append(out, ev)
	}
	if q.Descend {
		slices.Reverse(out)
	}
	return out
}

// readAllPages follows a history read page by page to its end and returns
// every event, checking each page's bounds.
func readAllPages(tb testing.TB, s *Store, q kv.HistoryRequest) ([]kv.Event, error) {
	tb.Helper()
	var all []kv.Event
	for pages := 0; ; pages++ {
		page, err := s.HistoryPage(q)
		if err != nil {
			return all, err
		}
		if q.Limit > 0 && len(page.Events) > q.Limit {
			tb.Fatalf("HistoryPage(%s) = %d events, want at most %d", showHistoryRequest(q), len(page.Events), q.Limit)
		}
		all = append(all, page.Events...)
		if !page.More {
			return all, nil
		}
		if pages > 100_000 {
			tb.Fatalf("HistoryPage(%s): more than 100000 pages", showHistoryRequest(q))
		}
		q.StartRevision, q.EndRevision, q.Resume = page.StartRevision, page.EndRevision, page.Next
	}
}

func showHistoryRequest(q kv.HistoryRequest) string {
	return fmt.Sprintf("key=%q end=%q window=[%d,%d] descend=%v prev_kv=%v noput=%v nodelete=%v resume=%v limit=%d bytes=%d scan=%d",
		q.Key, q.End, q.StartRevision, q.EndRevision, q.Descend, q.PrevKV, q.NoPut, q.NoDelete, q.Resume, q.Limit, q.MaxBytes, q.MaxScan)
}

// showEvent is an event in short: "put a=1@2", "delete a@5", with
// " (was a=2@4)" for a previous version.
func showEvent(ev *kv.Event) string {
	var b strings.Builder
	if ev.Type == kv.EventDelete {
		fmt.Fprintf(&b, "delete %s@%d", ev.KV.Key, ev.KV.ModRevision)
	} else {
		fmt.Fprintf(&b, "put %s=%s@%d", ev.KV.Key, ev.KV.Value, ev.KV.ModRevision)
	}
	if ev.PrevKV != nil {
		fmt.Fprintf(&b, " (was %s=%s@%d)", ev.PrevKV.Key, ev.PrevKV.Value, ev.PrevKV.ModRevision)
	}
	return b.String()
}

// showEventFull is an event with every field of its key-values.
func showEventFull(ev *kv.Event) string {
	s := fmt.Sprintf("%v %s", ev.Type, showKV(&ev.KV))
	if ev.PrevKV != nil {
		s += " prev " + showKV(ev.PrevKV)
	}
	return s
}

func showHistory(evs []kv.Event, show func(*kv.Event) string) []string {
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = show(&evs[i])
	}
	return out
}

// scriptedHistory writes, on a fresh store:
//
//	2 put a=1   3 put b=1   4 put a=2   5 delete a   6 put a=3, put c=1
//	7 put b=2   8 delete [b, d) (b and c)   9 put a/x=x
func scriptedHistory(t *testing.T) (*Store, *historyLog) {
	t.Helper()
	s := openTestStore(t, Options{})
	l := newHistoryLog()
	l.put(t, s, "a", "1")
	l.put(t, s, "b", "1")
	l.put(t, s, "a", "2")
	l.del(t, s, "a", "")
	l.write(t, s, func(tx *WriteTxn) error {
		if _, err := tx.Put(kv.PutRequest{Key: []byte("a"), Value: []byte("3")}); err != nil {
			return err
		}
		_, err := tx.Put(kv.PutRequest{Key: []byte("c"), Value: []byte("1")})
		return err
	})
	l.put(t, s, "b", "2")
	l.del(t, s, "b", "d")
	l.put(t, s, "a/x", "x")
	return s, l
}

// TestHistoryPage reads the scripted history with each option.
func TestHistoryPage(t *testing.T) {
	s, _ := scriptedHistory(t)
	all := []string{"put a=1@2", "put b=1@3", "put a=2@4", "delete a@5", "put a=3@6", "put c=1@6",
		"put b=2@7", "delete b@8", "delete c@8", "put a/x=x@9"}
	every := kv.HistoryRequest{Key: []byte{0}, End: []byte{0}}
	tests := []struct {
		name string
		q    kv.HistoryRequest
		want []string
		more bool
		next kv.Revision
	}{
		{"every key", every, all, false, kv.Revision{}},
		{"every key descending", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, Descend: true},
			[]string{"put a/x=x@9", "delete c@8", "delete b@8", "put b=2@7", "put c=1@6", "put a=3@6", "delete a@5", "put a=2@4", "put b=1@3", "put a=1@2"}, false, kv.Revision{}},
		{"single key", kv.HistoryRequest{Key: []byte("a")},
			[]string{"put a=1@2", "put a=2@4", "delete a@5", "put a=3@6"}, false, kv.Revision{}},
		{"single key descending", kv.HistoryRequest{Key: []byte("a"), Descend: true},
			[]string{"put a=3@6", "delete a@5", "put a=2@4", "put a=1@2"}, false, kv.Revision{}},
		{"single key never written", kv.HistoryRequest{Key: []byte("zz")}, nil, false, kv.Revision{}},
		{"prefix a", kv.HistoryRequest{Key: []byte("a"), End: []byte("b")},
			[]string{"put a=1@2", "put a=2@4", "delete a@5", "put a=3@6", "put a/x=x@9"}, false, kv.Revision{}},
		{"from key b", kv.HistoryRequest{Key: []byte("b"), End: []byte{0}},
			[]string{"put b=1@3", "put c=1@6", "put b=2@7", "delete b@8", "delete c@8"}, false, kv.Revision{}},
		{"window [4, 6]", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, StartRevision: 4, EndRevision: 6},
			[]string{"put a=2@4", "delete a@5", "put a=3@6", "put c=1@6"}, false, kv.Revision{}},
		{"window [8, 8] descending", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, StartRevision: 8, EndRevision: 8, Descend: true},
			[]string{"delete c@8", "delete b@8"}, false, kv.Revision{}},
		{"no puts", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, NoPut: true},
			[]string{"delete a@5", "delete b@8", "delete c@8"}, false, kv.Revision{}},
		{"no deletes of a", kv.HistoryRequest{Key: []byte("a"), NoDelete: true},
			[]string{"put a=1@2", "put a=2@4", "put a=3@6"}, false, kv.Revision{}},
		{"prev_kv", kv.HistoryRequest{Key: []byte("a"), End: []byte("b"), PrevKV: true},
			[]string{"put a=1@2", "put a=2@4 (was a=1@2)", "delete a@5 (was a=2@4)", "put a=3@6", "put a/x=x@9"}, false, kv.Revision{}},
		{"prev_kv of a range delete", kv.HistoryRequest{Key: []byte("b"), End: []byte("d"), StartRevision: 8, PrevKV: true},
			[]string{"delete b@8 (was b=2@7)", "delete c@8 (was c=1@6)"}, false, kv.Revision{}},
		{"limit stops at the next event", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, Limit: 4},
			all[:4], true, kv.Revision{Main: 6}},
		{"limit inside a revision", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, Limit: 5},
			all[:5], true, kv.Revision{Main: 6, Sub: 1}},
		{"limit descending", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, Limit: 2, Descend: true},
			[]string{"put a/x=x@9", "delete c@8"}, true, kv.Revision{Main: 8}},
		{"limit of a single key", kv.HistoryRequest{Key: []byte("a"), Limit: 2},
			[]string{"put a=1@2", "put a=2@4"}, true, kv.Revision{Main: 5}},
		{"limit reached by the last event", kv.HistoryRequest{Key: []byte("a"), Limit: 4},
			[]string{"put a=1@2", "put a=2@4", "delete a@5", "put a=3@6"}, false, kv.Revision{}},
		{"resume", kv.HistoryRequest{Key: []byte{0}, End: []byte{0}, StartRevision: 1, EndRevision: 9, Resume: kv.Revision{Main: 6, Sub: 1}, Limit: 2},
			[]string{"put c=1@6", "put b=2@7"}, true, kv.Revision{Main: 8}},
		{"resume descending", kv.HistoryRequest{Key: []byte("a"), StartRevision: 1, EndRevision: 9, Resume: kv.Revision{Main: 5, Sub: maxSub}, Descend: true},
			[]string{"delete a@5", "put a=2@4", "put a=1@2"}, false, kv.Revision{}},
		{"scan bound", kv.HistoryRequest{Key: []byte("c"), End: []byte("d"), MaxScan: 3},
			nil, true, kv.Revision{Main: 5}},
		{"bytes bound", kv.HistoryRequest{Key: []byte("a"), MaxBytes: 1},
			[]string{"put a=1@2"}, true, kv.Revision{Main: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := s.HistoryPage(tt.q)
			if err != nil {
				t.Fatalf("HistoryPage(%s) = %v, want nil", showHistoryRequest(tt.q), err)
			}
			got := showHistory(page.Events, showEvent)
			if !slices.Equal(got, tt.want) || page.More != tt.more || page.More && page.Next != tt.next {
				t.Errorf("HistoryPage(%s) = %q more=%v next=%v, want %q more=%v next=%v",
					showHistoryRequest(tt.q), got, page.More, page.Next, tt.want, tt.more, tt.next)
			}
			if page.Revision != 9 || page.CompactRevision != 0 {
				t.Errorf("HistoryPage(%s): revision %d, compact revision %d; want 9 and 0", showHistoryRequest(tt.q), page.Revision, page.CompactRevision)
			}
		})
	}
}

// TestHistoryPageErrors: bad windows and positions fail and say why.
func TestHistoryPageErrors(t *testing.T) {
	s, _ := scriptedHistory(t)
	tests := []struct {
		name string
		q    kv.HistoryRequest
		want error
	}{
		{"empty key", kv.HistoryRequest{}, kv.ErrInvalidArgument},
		{"end above current", kv.HistoryRequest{Key: []byte("a"), EndRevision: 10}, kv.ErrFutureRevision},
		{"start above current", kv.HistoryRequest{Key: []byte("a"), StartRevision: 10}, kv.ErrFutureRevision},
		{"start after end", kv.HistoryRequest{Key: []byte("a"), StartRevision: 5, EndRevision: 4}, kv.ErrInvalidArgument},
		{"negative start", kv.HistoryRequest{Key: []byte("a"), StartRevision: -1}, kv.ErrInvalidArgument},
		{"negative limit", kv.HistoryRequest{Key: []byte("a"), Limit: -1}, kv.ErrInvalidArgument},
		{"resume below the window", kv.HistoryRequest{Key: []byte("a"), StartRevision: 4, EndRevision: 6, Resume: kv.Revision{Main: 3}}, kv.ErrInvalidArgument},
		{"resume above the window", kv.HistoryRequest{Key: []byte("a"), StartRevision: 4, EndRevision: 6, Resume: kv.Revision{Main: 7}}, kv.ErrInvalidArgument},
		{"negative resume", kv.HistoryRequest{Key: []byte("a"), Resume: kv.Revision{Main: 4, Sub: -1}}, kv.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.HistoryPage(tt.q); !errors.Is(err, tt.want) {
				t.Errorf("HistoryPage(%s) = %v, want %v", showHistoryRequest(tt.q), err, tt.want)
			}
		})
	}
}

// TestHistoryPagesMatchLog writes a random history, compacts it part
// way, and reads it with every combination of range, order, filters,
// prev_kv and window, in pages of every size and budget: the pages
// together always equal the recorded history, which one big page equals
// too.
func TestHistoryPagesMatchLog(t *testing.T) {
	s := openTestStore(t, Options{})
	l := newHistoryLog()
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a", "a/x", "a/y", "b", "c", "d\xff"}
	randomWrites(t, s, l, rng, keys, 120)
	compact := s.Rev() / 3
	compactAndWait(t, s, compact)
	randomWrites(t, s, l, rng, keys, 60)
	cur := s.Rev()

	ranges := []struct{ key, end string }{{"a", ""}, {"d\xff", ""}, {"a", "b"}, {"b", "d"}, {"c", "\x00"}, {"\x00", "\x00"}}
	windows := [][2]int64{{0, 0}, {compact, cur}, {compact + 7, cur - 9}}
	pagings := []struct{ limit, bytes, scan int }{
		{0, 0, 0}, {1, 0, 0}, {3, 0, 0}, {1000, 0, 1}, {2, 0, 5}, {0, 1, 0}, {4, 300, 7},
	}
	for _, r := range ranges {
		for _, w := range windows {
			for flags := range 16 {
				q := kv.HistoryRequest{Key: []byte(r.key), StartRevision: w[0], EndRevision: w[1],
					Descend: flags&1 != 0, PrevKV: flags&2 != 0, NoPut: flags&4 != 0, NoDelete: flags&8 != 0}
				if r.end != "" {
					q.End = []byte(r.end)
				}
				start, end := max(w[0], compact), w[1]
				if end == 0 {
					end = cur
				}
				want := showHistory(l.want(q, compact, start, end), showEventFull)
				for _, p := range pagings {
					q.Limit, q.MaxBytes, q.MaxScan = p.limit, p.bytes, p.scan
					evs, err := readAllPages(t, s, q)
					if got := showHistory(evs, showEventFull); err != nil || !slices.Equal(got, want) {
						t.Fatalf("HistoryPage(%s) over every page = %d events, %v; want %d:\n got %q\nwant %q",
							showHistoryRequest(q), len(got), err, len(want), got, want)
					}
				}
			}
		}
	}
}

// randomWrites makes n random write requests over keys: puts, deletes of
// a key or a range, and requests of several writes.
func randomWrites(tb testing.TB, s *Store, l *historyLog, rng *rand.Rand, keys []string, n int) {
	tb.Helper()
	for range n {
		switch x := rng.IntN(10); {
		case x < 6:
			l.put(tb, s, keys[rng.IntN(len(keys))], fmt.Sprint(rng.IntN(1000)))
		case x < 8:
			a, b := keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))]
			if rng.IntN(2) == 0 {
				b = ""
			}
			l.del(tb, s, a, b)
		default:
			picked := map[string]bool{}
			l.write(tb, s, func(tx *WriteTxn) error {
				for range 1 + rng.IntN(3) {
					k := keys[rng.IntN(len(keys))]
					if picked[k] {
						continue
					}
					picked[k] = true
					if _, err := tx.Put(kv.PutRequest{Key: []byte(k), Value: []byte("txn")}); err != nil {
						return err
					}
				}
				return nil
			})
		}
	}
}
