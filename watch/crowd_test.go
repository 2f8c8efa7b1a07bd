package watch

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// crowdValue is the value of the crowd tests' puts: large against their
// bound for all watchers, so that one revision per watcher would pass it
// many times over.
const crowdValue = 256 << 10

// TestMaxPendingBytesCrowd: watchers of distinct keys whose readers stall
// as an HTTP stream's do when its client stops reading (each takes what
// it is given and holds it, writing it out), each offered one large
// revision of its own while holding nothing. The store holds no more
// than its bound for all of them (before, a watcher holding nothing
// always took one revision, and 64 of them held 64 revisions, 16 times
// the bound); the others wait, and catch up from history once the
// readers go on: each gets its put.
func TestMaxPendingBytesCrowd(t *testing.T) {
	const (
		watchers = 64
		total    = 1 << 20
	)
	s := newTestStore(t, Options{MaxPendingBytes: total})
	h := newHistory()
	v := strings.Repeat("v", crowdValue)
	revs := make([]int64, watchers)
	got := make([]int64, watchers)
	goOn := make(chan struct{})
	var done sync.WaitGroup
	for i := range watchers {
		w := mustWatch(t, s, kv.WatchRequest{Key: fmt.Appendf(nil, "k/%02d", i)})
		done.Add(1)
		go func() {
			defer done.Done()
			defer w.Close()
			<-w.Ready()
			rs := w.Next() // taken, and held: the reader stalls
			<-goOn
			for {
				for _, r := range rs {
					if len(r.Events) > 0 && len(r.Events[0].KV.Value) == crowdValue {
						got[i] = r.Events[0].KV.ModRevision
						return
					}
				}
				rs = recvUntil(t, w, recvTimeout, func(kv.WatchResponse) bool { return true })
			}
		}()
	}
	var most int64
	for i := range watchers {
		revs[i] = h.put(t, s, fmt.Sprintf("k/%02d", i), v)
		most = max(most, s.Stats().PendingBytes)
	}
	st := s.Stats()
	close(goOn)
	done.Wait()
	t.Logf("%d stalled readers of their own keys, a put of %d bytes each: the store held at most %d bytes (bound %d); %+v", watchers, crowdValue, most, total, st)
	if most > total {
		t.Fatalf("the store held %d bytes for stalled readers, want at most its bound %d (one revision each would be %d)", most, total, watchers*crowdValue)
	}
	for i := range revs {
		if got[i] != revs[i] {
			t.Fatalf("watcher %d got its put at revision %d, want %d", i, got[i], revs[i])
		}
	}
	if st := s.Stats(); st.PendingBytes != 0 {
		t.Fatalf("Stats() once every watcher closed = %+v, want nothing pending", st)
	}
}

// TestMaxPendingBytesEvictsStalled: a watcher whose reader leaves what is
// queued for it untaken is given back what it holds once the store has
// had no room for another's revision: that reader gets its put within a
// few seconds, instead of waiting for the stalled one to read or leave;
// and the stalled one, once it reads, gets every revision, replayed from
// history.
func TestMaxPendingBytesEvictsStalled(t *testing.T) {
	const total = 1 << 20
	s := newTestStore(t, Options{MaxPendingBytes: total})
	h := newHistory()
	stalled := mustWatch(t, s, kv.WatchRequest{Key: []byte("a/"), End: []byte("a0")})
	reader := mustWatch(t, s, kv.WatchRequest{Key: []byte("b")})
	v := strings.Repeat("v", crowdValue)
	var want []int64
	for i := range 3 {
		want = append(want, h.put(t, s, fmt.Sprintf("a/%d", i), v))
	}
	rev := h.put(t, s, "b", v)
	rs := recvUntil(t, reader, 3*stallAfter+recvTimeout, func(r kv.WatchResponse) bool { return len(r.Events) > 0 })
	if r := rs[len(rs)-1]; r.Events[0].KV.ModRevision != rev {
		t.Fatalf("the reader got %v, want its put at revision %d", fmtResponses(rs), rev)
	}
	if st := s.Stats(); st.Evictions == 0 {
		t.Fatalf("Stats() = %+v, want the stalled watcher given back what it held", st)
	}
	for len(want) > 0 {
		for _, r := range recvUntil(t, stalled, recvTimeout, func(kv.WatchResponse) bool { return true }) {
			for _, ev := range r.Events {
				if ev.KV.ModRevision != want[0] {
					t.Fatalf("the stalled watcher got revision %d, want %d", ev.KV.ModRevision, want[0])
				}
				want = want[1:]
			}
		}
	}
}

// TestMaxPendingBytesShared: the watchers of one key hold one revision
// together, counted once: 64 stalled watchers and a put of 256 KiB count
// about 256 KiB against the store's bound, not 64 times that, so that a
// fan-out is not taken for a crowd.
func TestMaxPendingBytesShared(t *testing.T) {
	const watchers = 64
	s := newTestStore(t, Options{MaxPendingBytes: 1 << 20})
	h := newHistory()
	streams := make([]*Stream, watchers)
	for i := range streams {
		streams[i] = mustWatch(t, s, kv.WatchRequest{Key: []byte("k")})
	}
	rev := h.put(t, s, "k", strings.Repeat("v", crowdValue))
	st := s.Stats()
	if st.PendingBytes < crowdValue || st.PendingBytes > crowdValue+4<<10 {
		t.Fatalf("Stats() = %+v with %d watchers of one key queued one put of %d bytes, want it counted once", st, watchers, crowdValue)
	}
	if st.Synced != watchers {
		t.Fatalf("Stats() = %+v, want every watcher to have taken the put", st)
	}
	for i, w := range streams {
		rs := recvUntil(t, w, recvTimeout, func(r kv.WatchResponse) bool { return len(r.Events) > 0 })
		if got := rs[len(rs)-1].Events[0].KV.ModRevision; got != rev {
			t.Fatalf("watcher %d got revision %d, want %d", i, got, rev)
		}
	}
	// Taken, not released: still counted once.
	if st := s.Stats(); st.PendingBytes > crowdValue+4<<10 {
		t.Fatalf("Stats() = %+v with the put taken by every reader, want it counted once", st)
	}
	for _, w := range streams {
		w.Release()
	}
	if st := s.Stats(); st.PendingBytes != 0 {
		t.Fatalf("Stats() once every reader released = %+v, want nothing pending", st)
	}
}

// TestMaxPendingBytesPrevKV: the previous versions a watcher's reader
// loads are its own. 64 readers of one key that ask for them take a put
// of 256 KiB over another at the same moment: the store holds at most
// its bound and maxFills loads past it (before, each loaded its own copy,
// 64 of them); those that found no room catch up from history once the
// others released, and every reader gets the put with its previous
// version.
func TestMaxPendingBytesPrevKV(t *testing.T) {
	const (
		watchers = 64
		total    = 1 << 20
	)
	s := newTestStore(t, Options{MaxPendingBytes: total})
	h := newHistory()
	streams := make([]*Stream, watchers)
	for i := range streams {
		streams[i] = mustWatch(t, s, kv.WatchRequest{Key: []byte("k"), PrevKV: true})
	}
	h.put(t, s, "k", strings.Repeat("a", crowdValue))
	rev := h.put(t, s, "k", strings.Repeat("b", crowdValue))

	// Every reader takes at once, and holds what it took.
	var took, done sync.WaitGroup
	release := make(chan struct{})
	got := make([]kv.Event, watchers)
	for i, w := range streams {
		took.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			defer w.Release() // written out
			<-w.Ready()
			rs := w.Next()
			took.Done()
			<-release
			// The responses' slice is the store's again once released;
			// their events stay the reader's.
			rs = slices.Clone(rs)
			w.Release()
			for {
				for _, r := range rs {
					for _, ev := range r.Events {
						if ev.KV.ModRevision == rev {
							got[i] = ev
							return
						}
					}
				}
				rs = recvUntil(t, w, recvTimeout, func(kv.WatchResponse) bool { return true })
			}
		}()
	}
	took.Wait()
	held := s.Stats().PendingBytes
	close(release)
	done.Wait()
	limit := int64(total + maxFills*(crowdValue+1024))
	t.Logf("%d readers loading a previous version of %d bytes at once: the store held %d bytes (bound %d)", watchers, crowdValue, held, total)
	if held > limit {
		t.Fatalf("the store held %d bytes while %d readers held what they took, want at most its bound and %d loads past it (%d)", held, watchers, maxFills, limit)
	}
	for i, ev := range got {
		if ev.PrevKV == nil || len(ev.PrevKV.Value) != crowdValue || ev.PrevKV.Value[0] != 'a' || ev.KV.Value[0] != 'b' {
			t.Fatalf("watcher %d: got %s, want the put at revision %d with its previous version", i, fmtEvent(ev), rev)
		}
	}
	for _, w := range streams {
		w.Close()
	}
	if st := s.Stats(); st.PendingBytes != 0 {
		t.Fatalf("Stats() once every watcher closed = %+v, want nothing pending", st)
	}
}

// TestCatchUpShared: watchers of one key caught up from history together
// share each response's events, as the watchers of a published revision
// do, so that what encodes them can encode them once; one that asked for
// previous versions has its own.
func TestCatchUpShared(t *testing.T) {
	s := newTestStore(t, Options{})
	h := newHistory()
	first := h.put(t, s, "k", "a")
	h.put(t, s, "k", "b")
	h.put(t, s, "other", "c")
	// Hold the sync loop in a pass of its own while the watchers start,
	// so that the next pass catches them up together.
	chosen, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.hooks.afterChoose = func() {
		once.Do(func() {
			close(chosen)
			<-release
		})
	}
	mustWatch(t, s, kv.WatchRequest{Key: []byte("other"), StartRevision: first})
	<-chosen
	streams := make([]*Stream, 4)
	for i := range streams {
		streams[i] = mustWatch(t, s, kv.WatchRequest{Key: []byte("k"), StartRevision: first, PrevKV: i == 3})
	}
	close(release)
	var got [][]kv.WatchResponse
	for _, w := range streams {
		got = append(got, recvUntil(t, w, recvTimeout, func(r kv.WatchResponse) bool { return len(r.Events) > 0 }))
	}
	a, b, own := got[0][0].Events, got[1][0].Events, got[3][0].Events
	if len(a) != 2 || &a[0] != &b[0] {
		t.Fatalf("two watchers of k caught up got %v and %v, want one shared slice of both revisions", fmtResponses(got[0]), fmtResponses(got[1]))
	}
	if &own[0] == &a[0] || own[1].PrevKV == nil || a[1].PrevKV != nil {
		t.Fatalf("the watcher that asked for previous versions shares its events, or they leaked: %v, %v", fmtResponses(got[3]), fmtResponses(got[0]))
	}
}
