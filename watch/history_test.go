package watch

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomized tests; 0 picks one")

// testSeed returns the seed of a randomized test, from -seed or the clock,
// and logs it so a failing run can be repeated.
func testSeed(tb testing.TB) uint64 {
	tb.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	tb.Logf("seed %d (repeat with -seed=%d)", seed, seed)
	return seed
}

// newTestStore opens an mvcc store in a temporary directory and a watch
// store over it; both are closed at cleanup, the watch store first.
func newTestStore(tb testing.TB, opts Options) *testStore {
	tb.Helper()
	kval, err := mvcc.Open(filepath.Join(tb.TempDir(), "db"), nil, nil, mvcc.Options{NoFsync: true})
	if err != nil {
		tb.Fatalf("mvcc.Open: %v", err)
	}
	s := observe(tb, kval, opts)
	tb.Cleanup(func() {
		s.Close()
		if err := kval.Close(); err != nil {
			tb.Errorf("mvcc Close: %v", err)
		}
	})
	return s
}

// history records every write made through a Store and every compaction,
// as the reference watchers are checked against. It never forgets, so it
// stands for a store that is never compacted.
type history struct {
	mu       sync.Mutex
	changes  []kv.Changes
	compacts map[int64]bool
}

func newHistory() *history { return &history{compacts: make(map[int64]bool)} }

// write runs fn through s.Write and records the changes it made.
func (h *history) write(s *testStore, fn func(*mvcc.WriteTxn) error) (kv.Changes, error) {
	ch, err := s.Write(fn)
	if err == nil && len(ch.Events) > 0 {
		h.mu.Lock()
		h.changes = append(h.changes, ch)
		h.mu.Unlock()
	}
	return ch, err
}

func (h *history) put(tb testing.TB, s *testStore, key, value string) int64 {
	tb.Helper()
	ch, err := h.write(s, func(tx *mvcc.WriteTxn) error {
		_, err := tx.Put(kv.PutRequest{Key: []byte(key), Value: []byte(value)})
		return err
	})
	if err != nil {
		tb.Fatalf("Put(%q, %q) = %v", key, value, err)
	}
	return ch.Revision
}

func (h *history) del(tb testing.TB, s *testStore, key, end string) int64 {
	tb.Helper()
	ch, err := h.write(s, func(tx *mvcc.WriteTxn) error {
		_, err := tx.DeleteRange(kv.DeleteRequest{Key: []byte(key), End: []byte(end)})
		return err
	})
	if err != nil {
		tb.Fatalf("DeleteRange(%q, %q) = %v", key, end, err)
	}
	return ch.Revision
}

// compact compacts s's store at rev and records it; it does not wait for
// the history to be removed.
func (h *history) compact(s *testStore, rev int64) error {
	if _, err := s.KV().Compact(rev); err != nil {
		return err
	}
	h.mu.Lock()
	h.compacts[rev] = true
	h.mu.Unlock()
	return nil
}

// reference is a recorded history in revision order, with each event's
// previous version worked out.
type reference struct {
	events   []kv.Event
	prev     []*kv.KeyValue // prev[i] is the version events[i] replaced
	compacts map[int64]bool
}

// reference checks that the recorded revisions run without gaps from the
// first one, and returns them in order.
func (h *history) reference(tb testing.TB) *reference {
	tb.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	chs := slices.Clone(h.changes)
	slices.SortFunc(chs, func(a, b kv.Changes) int { return cmp.Compare(a.Revision, b.Revision) })
	ref := &reference{compacts: make(map[int64]bool)}
	for rev := range h.compacts {
		ref.compacts[rev] = true
	}
	live := make(map[string]*kv.KeyValue)
	for i, ch := range chs {
		if i > 0 && ch.Revision != chs[i-1].Revision+1 {
			tb.Fatalf("recorded history jumps from revision %d to %d", chs[i-1].Revision, ch.Revision)
		}
		for _, ev := range ch.Events {
			if ev.KV.ModRevision != ch.Revision {
				tb.Fatalf("event %+v recorded at revision %d", ev, ch.Revision)
			}
			ref.events = append(ref.events, ev)
			ref.prev = append(ref.prev, live[string(ev.KV.Key)])
			if ev.Type == kv.EventPut {
				kval := ev.KV
				live[string(kval.Key)] = &kval
			} else {
				delete(live, string(ev.KV.Key))
			}
		}
	}
	return ref
}

// inRange restates Request's key selection, independently of the store.
func inRange(r kv.WatchRequest, key []byte) bool {
	switch {
	case len(r.End) == 0:
		return bytes.Equal(key, r.Key)
	case len(r.End) == 1 && r.End[0] == 0:
		return bytes.Compare(key, r.Key) >= 0
	}
	return bytes.Compare(key, r.Key) >= 0 && bytes.Compare(key, r.End) < 0
}

// expected returns the indexes of the events a watcher of r starting at
// start must receive.
func (ref *reference) expected(r kv.WatchRequest, start int64) []int {
	var idx []int
	for i, ev := range ref.events {
		switch {
		case ev.KV.ModRevision < start:
		case ev.Type == kv.EventPut && r.NoPut, ev.Type == kv.EventDelete && r.NoDelete:
		case inRange(r, ev.KV.Key):
			idx = append(idx, i)
		}
	}
	return idx
}

func sameKV(a, b *kv.KeyValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) &&
		a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision &&
		a.Version == b.Version && a.Lease == b.Lease
}

func fmtKV(kval *kv.KeyValue) string {
	if kval == nil {
		return "<nil>"
	}
	return fmt.Sprintf("{%q=%q create=%d mod=%d ver=%d lease=%d}", kval.Key, kval.Value, kval.CreateRevision, kval.ModRevision, kval.Version, kval.Lease)
}

func fmtEvent(ev kv.Event) string { return ev.Type.String() + " " + fmtKV(&ev.KV) }

// checkOptions say how a watcher's stream may end.
type checkOptions struct {
	// canceled: the watch was canceled, so it may stop anywhere, with or
	// without a canceled response.
	canceled bool
}

// check proves that rs, everything a watcher of r starting at start
// received, is exactly the history filtered to its range and filters from
// start: the same events in the same order with no duplicates and no gaps,
// each revision's events in one response, progress never ahead of an
// event, and the stream either complete or ended by a compacted response
// that names a compaction of a revision the watcher still needed.
func (ref *reference) check(r kv.WatchRequest, start int64, rs []kv.WatchResponse, o checkOptions) error {
	exp := ref.expected(r, start)
	rev := func(pos int) int64 { return ref.events[exp[pos]].KV.ModRevision }
	pos := 0       // exp[pos] is the next event the watcher must receive
	next := start  // every event below next has been received
	final := false // a compacted or canceled response was received
	for i, resp := range rs {
		where := fmt.Sprintf("response %d (%s)", i, fmtResponse(resp))
		if final {
			return fmt.Errorf("%s after the final one", where)
		}
		switch {
		case len(resp.Events) > 0:
			if resp.Progress || resp.Canceled || resp.CompactRevision != 0 {
				return fmt.Errorf("%s: events with a bookmark or an end", where)
			}
			first := resp.Events[0].KV.ModRevision
			if pos > 0 && rev(pos-1) == first {
				return fmt.Errorf("%s: revision %d split across responses", where, first)
			}
			for j, ev := range resp.Events {
				if pos == len(exp) {
					return fmt.Errorf("%s: event %d %s beyond the %d expected", where, j, fmtEvent(ev), len(exp))
				}
				want := ref.events[exp[pos]]
				if ev.Type != want.Type || !sameKV(&ev.KV, &want.KV) {
					return fmt.Errorf("%s: event %d = %s, want %s (expected event %d)", where, j, fmtEvent(ev), fmtEvent(want), pos)
				}
				var wantPrev *kv.KeyValue
				if r.PrevKV {
					wantPrev = ref.prev[exp[pos]]
				}
				if !sameKV(ev.PrevKV, wantPrev) {
					return fmt.Errorf("%s: event %d %s has prev %s, want %s", where, j, fmtEvent(ev), fmtKV(ev.PrevKV), fmtKV(wantPrev))
				}
				pos++
			}
			last := resp.Events[len(resp.Events)-1].KV.ModRevision
			if resp.Revision != last {
				return fmt.Errorf("%s: revision %d, want its last event's %d", where, resp.Revision, last)
			}
			if pos < len(exp) && rev(pos) == last {
				return fmt.Errorf("%s: revision %d split across responses", where, last)
			}
			next = last + 1
		case resp.Progress:
			if resp.Revision < start-1 {
				return fmt.Errorf("%s: progress at %d claims revisions before the start %d", where, resp.Revision, start)
			}
			if pos < len(exp) && rev(pos) <= resp.Revision {
				return fmt.Errorf("%s: progress at %d ahead of undelivered event %s", where, resp.Revision, fmtEvent(ref.events[exp[pos]]))
			}
			next = max(next, resp.Revision+1)
		case resp.CompactRevision != 0:
			c := resp.CompactRevision
			if !ref.compacts[c] {
				return fmt.Errorf("%s: no compaction at %d was made", where, c)
			}
			// Compacted is right only if the watcher needed history below
			// c; for a previous version, a revision at or below c.
			needed := c > next || r.PrevKV && pos < len(exp) && rev(pos) <= c
			if !needed {
				return fmt.Errorf("%s: compacted at %d but the watcher needs only revision %d on", where, c, next)
			}
			final = true
		case resp.Canceled:
			if !o.canceled {
				return fmt.Errorf("%s: canceled, and it was not", where)
			}
			final = true
		default:
			return fmt.Errorf("%s: empty response", where)
		}
	}
	if !final && !o.canceled && pos != len(exp) {
		return fmt.Errorf("received %d of %d events; first missing %s", pos, len(exp), fmtEvent(ref.events[exp[pos]]))
	}
	return nil
}

func fmtResponse(r kv.WatchResponse) string {
	switch {
	case len(r.Events) > 0:
		return fmt.Sprintf("%d events at %d..%d", len(r.Events), r.Events[0].KV.ModRevision, r.Revision)
	case r.Progress:
		return fmt.Sprintf("progress at %d", r.Revision)
	case r.CompactRevision != 0:
		return fmt.Sprintf("compacted at %d", r.CompactRevision)
	case r.Canceled:
		return fmt.Sprintf("canceled: %s", r.CancelReason)
	}
	return fmt.Sprintf("%+v", r)
}

// recvUntil receives from st until done reports true for a response, or
// the stream ends, or timeout passes; it returns everything received.
func recvUntil(tb testing.TB, st *Stream, timeout time.Duration, done func(kv.WatchResponse) bool) []kv.WatchResponse {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var all []kv.WatchResponse
	for {
		rs, err := st.Recv(ctx)
		if err != nil {
			tb.Fatalf("Recv after %d responses (%v): %v", len(all), fmtResponses(all), err)
		}
		if rs == nil {
			return all
		}
		all = append(all, rs...)
		for _, r := range rs {
			if done(r) {
				return all
			}
		}
	}
}

func fmtResponses(rs []kv.WatchResponse) []string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmtResponse(r)
	}
	return s
}

// isFinal reports whether r ends its watch.
func isFinal(r kv.WatchResponse) bool { return r.CompactRevision != 0 || r.Canceled }
