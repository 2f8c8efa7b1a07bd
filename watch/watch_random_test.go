package watch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

// TestWatchRandom runs concurrent writers (puts, deletes, range deletes,
// multi-key txns) and compactions against watchers on overlapping ranges,
// started in the past, now and in the future, read fast, slowly, or
// canceled midway, with filters, previous versions and progress, and
// checks every watcher's stream against the recorded history.
func TestWatchRandom(t *testing.T) {
	seed := testSeed(t)
	for i, tc := range []struct {
		name string
		opts Options
	}{
		{"defaults", Options{SyncInterval: 5 * time.Millisecond}},
		{"queue-8", Options{QueueLimit: 8, MaxSyncWatchers: 4, SyncInterval: 5 * time.Millisecond, VictimInterval: time.Millisecond}},
		{"queue-1", Options{QueueLimit: 1, MaxSyncWatchers: 1, SyncInterval: time.Millisecond, VictimInterval: time.Millisecond}},
		{"queue-64", Options{QueueLimit: 64, SyncInterval: 5 * time.Millisecond, ProgressInterval: 5 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runRandomWatch(t, seed+uint64(i), tc.opts)
		})
	}
}

// randomKeys are the keys written: several prefixes, one nested in another.
var randomKeys = func() []string {
	var keys []string
	for _, p := range []string{"a/", "a/x/", "b/", "c"} {
		for i := range 6 {
			keys = append(keys, fmt.Sprintf("%s%d", p, i))
		}
	}
	return keys
}()

// randomPrefixes are prefixes of randomKeys, as [key, end) ranges.
var randomPrefixes = [][2]string{{"a/", "a0"}, {"a/x/", "a/x0"}, {"b/", "b0"}, {"c", "d"}}

func randomRequest(rng *rand.Rand) kv.WatchRequest {
	var r kv.WatchRequest
	switch rng.IntN(4) {
	case 0:
		r.Key = []byte(randomKeys[rng.IntN(len(randomKeys))])
	case 1:
		a, b := randomKeys[rng.IntN(len(randomKeys))], randomKeys[rng.IntN(len(randomKeys))]
		r.Key, r.End = []byte(min(a, b)), []byte(max(a, b)+"\x00")
	case 2:
		p := randomPrefixes[rng.IntN(len(randomPrefixes))]
		r.Key, r.End = []byte(p[0]), []byte(p[1])
	default:
		r.Key, r.End = []byte(randomKeys[rng.IntN(len(randomKeys))]), []byte{0}
	}
	switch rng.IntN(6) {
	case 0:
		r.NoPut = true
	case 1:
		r.NoDelete = true
	}
	r.PrevKV = rng.IntN(4) == 0
	r.ProgressNotify = rng.IntN(4) == 0
	return r
}

// randomWrite makes one random write: a put, a delete, a range delete or a
// txn over several distinct keys, sometimes taking its failure branch.
func randomWrite(rng *rand.Rand, tx *mvcc.WriteTxn, seq string) error {
	key := func() []byte { return []byte(randomKeys[rng.IntN(len(randomKeys))]) }
	switch n := rng.IntN(10); {
	case n < 4:
		_, err := tx.Put(kv.PutRequest{Key: key(), Value: []byte(seq)})
		return err
	case n < 5:
		_, err := tx.DeleteRange(kv.DeleteRequest{Key: key()})
		return err
	case n < 6:
		p := randomPrefixes[rng.IntN(len(randomPrefixes))]
		_, err := tx.DeleteRange(kv.DeleteRequest{Key: []byte(p[0]), End: []byte(p[1])})
		return err
	default:
		var ops []kv.Op
		for i, k := range rng.Perm(len(randomKeys))[:2+rng.IntN(4)] {
			key := []byte(randomKeys[k])
			if rng.IntN(3) == 0 {
				ops = append(ops, kv.Op{Delete: &kv.DeleteRequest{Key: key}})
			} else {
				ops = append(ops, kv.Op{Put: &kv.PutRequest{Key: key, Value: fmt.Appendf(nil, "%s.%d", seq, i)}})
			}
		}
		half := len(ops) / 2
		_, err := tx.Txn(kv.TxnRequest{
			Compare: []kv.Compare{{Key: key(), Target: kv.CompareVersion, Result: kv.CompareGreater}},
			Success: ops[:half],
			Failure: ops[half:],
		})
		return err
	}
}

// randomWatcher is one watcher of the test and what its reader saw.
type randomWatcher struct {
	req         kv.WatchRequest
	st          *Stream
	slow        bool
	cancelAfter int // close the stream after this many responses; 0 never
	canceled    atomic.Bool
	got         []kv.WatchResponse
	err         error
}

func (w *randomWatcher) String() string {
	return fmt.Sprintf("watch [%q, %q) from %d (noPut=%v noDelete=%v prevKV=%v progress=%v slow=%v cancelAfter=%d)",
		w.req.Key, w.req.End, w.st.StartRevision(), w.req.NoPut, w.req.NoDelete, w.req.PrevKV, w.req.ProgressNotify, w.slow, w.cancelAfter)
}

// read receives until the stream ends, or a progress response reaches the
// final revision once it is known, or ctx is done.
func (w *randomWatcher) read(ctx context.Context, rng *rand.Rand, finalRev *atomic.Int64) {
	for {
		if w.cancelAfter > 0 && len(w.got) >= w.cancelAfter && !w.canceled.Load() {
			w.canceled.Store(true)
			w.st.Close()
		}
		rs, err := w.st.Recv(ctx)
		if err != nil {
			w.err = err
			return
		}
		if rs == nil {
			return
		}
		w.got = append(w.got, rs...)
		for _, r := range rs {
			if isFinal(r) {
				return
			}
			if fr := finalRev.Load(); r.Progress && fr != 0 && r.Revision >= fr {
				return
			}
		}
		if w.slow {
			time.Sleep(time.Duration(rng.IntN(1000)) * time.Microsecond)
		}
	}
}

func runRandomWatch(t *testing.T, seed uint64, opts Options) {
	const (
		writers         = 3
		writesPerWriter = 250
		watchers        = 60
	)
	s := newTestStore(t, opts)
	kval := s.KV()
	h := newHistory()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var writing sync.WaitGroup
	var writeErr atomic.Pointer[error]
	for i := range writers {
		writing.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			for n := range writesPerWriter {
				seq := fmt.Sprintf("w%d.%d", i, n)
				if _, err := h.write(s, func(tx *mvcc.WriteTxn) error { return randomWrite(rng, tx, seq) }); err != nil {
					writeErr.CompareAndSwap(nil, &err)
					return
				}
				if rng.IntN(8) == 0 {
					time.Sleep(100 * time.Microsecond)
				}
			}
		})
	}
	writesDone := make(chan struct{})
	go func() {
		writing.Wait()
		close(writesDone)
	}()

	// Compact now and then, a little behind the current revision.
	compacting := make(chan struct{})
	go func() {
		defer close(compacting)
		rng := rand.New(rand.NewPCG(seed, 100))
		for {
			select {
			case <-writesDone:
				return
			case <-time.After(time.Duration(5+rng.IntN(20)) * time.Millisecond):
			}
			rev := kval.Rev() - int64(rng.IntN(40))
			if rev <= kval.CompactRev() {
				continue
			}
			if err := h.compact(s, rev); err != nil && !errors.Is(err, kv.ErrCompacted) {
				t.Errorf("Compact(%d) = %v", rev, err)
				return
			}
		}
	}()

	// Sample the groups, to show which paths the run took.
	var maxUnsynced, maxVictims atomic.Int64
	sampling := make(chan struct{})
	go func() {
		defer close(sampling)
		for {
			select {
			case <-writesDone:
				return
			case <-time.After(time.Millisecond):
			}
			st := s.Stats()
			maxUnsynced.Store(max(maxUnsynced.Load(), int64(st.Unsynced)))
			maxVictims.Store(max(maxVictims.Load(), int64(st.Victims)))
		}
	}()

	// Start watchers while the writes go on.
	var finalRev atomic.Int64
	var reading sync.WaitGroup
	var ws []*randomWatcher
	rng := rand.New(rand.NewPCG(seed, 200))
	for i := range watchers {
		req := randomRequest(rng)
		cur := kval.Rev()
		switch rng.IntN(5) {
		case 0, 1: // now
		case 2: // anywhere in the past, perhaps compacted
			req.StartRevision = 1 + rng.Int64N(cur)
		case 3: // at the compact revision
			req.StartRevision = max(1, kval.CompactRev())
		default: // a little in the future
			req.StartRevision = cur + 1 + rng.Int64N(10)
		}
		st, err := s.Watch(req)
		if err != nil {
			t.Fatalf("Watch(%+v) = %v", req, err)
		}
		w := &randomWatcher{req: req, st: st, slow: rng.IntN(3) == 0}
		if rng.IntN(6) == 0 {
			w.cancelAfter = 1 + rng.IntN(10)
		}
		ws = append(ws, w)
		reading.Go(func() { w.read(ctx, rand.New(rand.NewPCG(seed, 300+uint64(i))), &finalRev) })
		if i%10 == 9 {
			// Cancel one from outside its reader, while it reads.
			v := ws[rng.IntN(len(ws))]
			v.canceled.Store(true)
			v.st.Close()
		}
		time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
	}
	<-writesDone
	<-compacting
	<-sampling
	if p := writeErr.Load(); p != nil {
		t.Fatalf("write: %v", *p)
	}
	// Every write is published once its Write returns: ask each watcher
	// for progress, which comes once it has everything up to the end.
	final := kval.Rev()
	finalRev.Store(final)
	for _, w := range ws {
		if w.st.StartRevision() > final+1 {
			w.canceled.Store(true) // it will never get that far
			w.st.Close()
		} else {
			w.st.RequestProgress()
		}
	}
	reading.Wait()

	ref := h.reference(t)
	t.Logf("%d revisions, %d events, %d compactions, final compact revision %d; stats %+v",
		final-1, len(ref.events), len(ref.compacts), kval.CompactRev(), s.Stats())
	counts := map[string]int{}
	for _, w := range ws {
		if w.err != nil {
			t.Errorf("%v: reader stopped after %v: %v; stats %+v", w, fmtResponses(w.got), w.err, s.Stats())
			continue
		}
		if err := ref.check(w.req, w.st.StartRevision(), w.got, checkOptions{canceled: w.canceled.Load()}); err != nil {
			t.Errorf("%v: %v", w, err)
		}
		switch {
		case len(w.got) > 0 && w.got[len(w.got)-1].CompactRevision != 0:
			counts["compacted"]++
		case w.canceled.Load():
			counts["canceled"]++
		default:
			counts["complete"]++
		}
	}
	t.Logf("watchers: %v; at most %d unsynced and %d victims at once", counts, maxUnsynced.Load(), maxVictims.Load())

	for _, w := range ws {
		w.st.Close()
	}
	if st := s.Stats(); st.Synced+st.Unsynced+st.Victims != 0 || st.PendingEvents != 0 {
		t.Errorf("Stats() after closing every stream = %+v, want no watchers and no pending events", st)
	}
}
