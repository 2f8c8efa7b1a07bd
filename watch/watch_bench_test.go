package watch

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// drain reads st until it ends.
func drain(st *Stream) {
	for {
		rs, err := st.Recv(context.Background())
		if err != nil || rs == nil {
			return
		}
	}
}

// BenchmarkPut measures the latency of one Put with no watchers, with
// 10,000 synced watchers of the prefix it writes (all notified, their
// readers draining), and with 100,000 watchers of other keys (none
// notified): the notify cost follows the matching watchers, not all of
// them.
func BenchmarkPut(b *testing.B) {
	for _, bc := range []struct {
		name string
		// watch starts the watchers, whose readers drain them if they
		// match the key written.
		watch func(b *testing.B, s *testStore) []*Stream
		match bool
	}{
		{"watchers=0", nil, false},
		{"prefix-watchers=10000", func(b *testing.B, s *testStore) []*Stream {
			return watchMany(b, s, 10_000, func(int) kv.WatchRequest { return kv.WatchRequest{Key: []byte("p/"), End: []byte("p0")} })
		}, true},
		{"other-key-watchers=100000", func(b *testing.B, s *testStore) []*Stream {
			return watchMany(b, s, 100_000, func(i int) kv.WatchRequest { return kv.WatchRequest{Key: fmt.Appendf(nil, "w/%06d", i)} })
		}, false},
		{"other-range-watchers=100000", func(b *testing.B, s *testStore) []*Stream {
			return watchMany(b, s, 100_000, func(i int) kv.WatchRequest {
				return kv.WatchRequest{Key: fmt.Appendf(nil, "w/%06d", i), End: fmt.Appendf(nil, "w/%06d", i+1)}
			})
		}, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newTestStore(b, Options{})
			var streams []*Stream
			if bc.watch != nil {
				streams = bc.watch(b, s)
			}
			var readers sync.WaitGroup
			if bc.match {
				for _, st := range streams {
					readers.Go(func() { drain(st) })
				}
			}
			defer readers.Wait()
			defer s.Close()
			key, value := []byte("p/k"), []byte("value")
			for b.Loop() {
				if _, err := s.Put(kv.PutRequest{Key: key, Value: value}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func watchMany(tb testing.TB, s *testStore, n int, req func(i int) kv.WatchRequest) []*Stream {
	tb.Helper()
	streams := make([]*Stream, n)
	for i := range streams {
		st, err := s.Watch(req(i))
		if err != nil {
			tb.Fatal(err)
		}
		streams[i] = st
	}
	return streams
}

// BenchmarkCatchUp measures how long a watcher 100,000 revisions behind
// takes from Watch to receiving the last of them.
func BenchmarkCatchUp(b *testing.B) {
	const revs = 100_000
	s := newTestStore(b, Options{})
	start := s.KV().Rev() + 1
	// Write the history from many goroutines, so commits are shared.
	const writers = 50
	var writing sync.WaitGroup
	for w := range writers {
		writing.Go(func() {
			for i := range revs / writers {
				if _, err := s.Put(kv.PutRequest{Key: fmt.Appendf(nil, "c/%02d/%06d", w, i%1000), Value: []byte("value")}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	writing.Wait()
	last := s.KV().Rev()
	if last-start+1 != revs {
		b.Fatalf("wrote revisions %d..%d, want %d", start, last, revs)
	}
	for b.Loop() {
		st, err := s.Watch(kv.WatchRequest{Key: []byte("c/"), End: []byte("c0"), StartRevision: start})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for done := false; !done; {
			rs, err := st.Recv(context.Background())
			if err != nil || rs == nil {
				b.Fatalf("Recv after %d events: %v", n, err)
			}
			for _, r := range rs {
				n += len(r.Events)
				done = done || r.Revision == last
			}
		}
		st.Close()
		if n != revs {
			b.Fatalf("received %d events, want %d", n, revs)
		}
	}
	b.ReportMetric(float64(revs)*float64(b.N)/b.Elapsed().Seconds(), "revisions/s")
}

// BenchmarkWatcherMemory measures the heap an idle watcher costs, its
// Stream included, with 100,000 of them.
func BenchmarkWatcherMemory(b *testing.B) {
	const n = 100_000
	for _, bc := range []struct {
		name string
		req  func(i int) kv.WatchRequest
	}{
		{"single-key", func(i int) kv.WatchRequest { return kv.WatchRequest{Key: fmt.Appendf(nil, "w/%06d", i)} }},
		{"same-key", func(int) kv.WatchRequest { return kv.WatchRequest{Key: []byte("w/shared")} }},
		{"range", func(i int) kv.WatchRequest {
			return kv.WatchRequest{Key: fmt.Appendf(nil, "w/%06d", i), End: fmt.Appendf(nil, "w/%06d", i+1)}
		}},
		{"same-prefix", func(int) kv.WatchRequest { return kv.WatchRequest{Key: []byte("w/"), End: []byte("w0")} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newTestStore(b, Options{})
			// The requests are made before measuring: they are the
			// caller's, not the watcher's.
			reqs := make([]kv.WatchRequest, n)
			for i := range reqs {
				reqs[i] = bc.req(i)
			}
			var perWatcher float64
			for b.Loop() {
				before := heapAlloc()
				streams := watchMany(b, s, n, func(i int) kv.WatchRequest { return reqs[i] })
				after := heapAlloc()
				perWatcher = float64(after-before) / n
				for _, st := range streams {
					st.Close()
				}
			}
			b.ReportMetric(perWatcher, "bytes/watcher")
		})
	}
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkFanoutTakes measures fanning commits of several revisions out
// to 1,000 watchers of one prefix whose readers take each commit at once
// and release it, as an HTTP stream does once it has written it: the
// store's cost per event delivered, queueing and taking included, with a
// take of 16 revisions each time (a stream of a busy prefix under many
// writers takes about that many at once).
func BenchmarkFanoutTakes(b *testing.B) {
	const watchers, revs = 1000, 16
	s := New(&memHistory{}, 1, Options{})
	var took, readers sync.WaitGroup
	for range watchers {
		st, err := s.Watch(kv.WatchRequest{Key: []byte("p/"), End: []byte("p0")})
		if err != nil {
			b.Fatal(err)
		}
		readers.Go(func() {
			defer st.Close()
			n := 0
			for range st.Ready() {
				rs := st.Next()
				for _, r := range rs {
					if r.Canceled || r.CompactRevision != 0 {
						return
					}
					for range r.Events {
						if n++; n%revs == 0 {
							took.Done()
						}
					}
				}
				st.Release()
			}
		})
	}
	defer readers.Wait()
	defer s.Close()
	changes := make([]kv.Changes, revs)
	for i := range changes {
		changes[i] = putAt(0, fmt.Sprintf("p/%02d", i), "value")
	}
	rev := int64(1)
	for b.Loop() {
		for i := range changes {
			rev++
			changes[i].Revision = rev
			changes[i].Events[0].KV.ModRevision = rev
		}
		took.Add(watchers)
		s.Publish(changes)
		took.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*watchers*revs), "ns/event")
}
