package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// snapshotBenchSize is the store BenchmarkSnapshotSave copies: 1 GiB, or
// HTTPKV_SNAPSHOT_BENCH_MIB mebibytes.
func snapshotBenchSize(tb testing.TB) int64 {
	if v := os.Getenv("HTTPKV_SNAPSHOT_BENCH_MIB"); v != "" {
		mib, err := strconv.ParseInt(v, 10, 64)
		if err != nil || mib <= 0 {
			tb.Fatalf("HTTPKV_SNAPSHOT_BENCH_MIB=%q: want a positive number", v)
		}
		return mib << 20
	}
	return 1 << 30
}

// putSample is one put of the writers: when it ended and how long it took.
type putSample struct {
	end time.Time
	lat time.Duration
}

// writeLoad is what the writers of BenchmarkSnapshotSave achieved in a
// span of time.
type writeLoad struct {
	puts    int
	elapsed time.Duration
	lat     []time.Duration // sorted
}

// loadIn is the puts of samples that ended in [from, to).
func loadIn(samples []putSample, from, to time.Time) writeLoad {
	w := writeLoad{elapsed: to.Sub(from)}
	for _, p := range samples {
		if !p.end.Before(from) && p.end.Before(to) {
			w.lat = append(w.lat, p.lat)
		}
	}
	slices.Sort(w.lat)
	w.puts = len(w.lat)
	return w
}

func (w writeLoad) rate() float64 { return float64(w.puts) / w.elapsed.Seconds() }

func (w writeLoad) quantile(q float64) time.Duration {
	if len(w.lat) == 0 {
		return 0
	}
	return w.lat[min(len(w.lat)-1, int(q*float64(len(w.lat))))]
}

func (w writeLoad) String() string {
	return fmt.Sprintf("%d puts in %.1fs: %.0f puts/s, p50 %v, p99 %v, max %v", w.puts, w.elapsed.Seconds(), w.rate(),
		w.quantile(0.5).Round(10*time.Microsecond), w.quantile(0.99).Round(10*time.Microsecond), w.quantile(1).Round(10*time.Microsecond))
}

// writeWhile runs writers putting 1 KiB values to keys of their own until
// done is closed, and returns every put they made.
func writeWhile(tb testing.TB, s *e2e.Server, writers int, done <-chan struct{}) []putSample {
	tb.Helper()
	value := bytes.Repeat([]byte("w"), 1024)
	samples := make([][]putSample, writers)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				t0 := time.Now()
				r, err := s.Send(context.Background(), "PUT", e2e.KeyPath(fmt.Sprintf("load/%02d/%d", w, i%1000)), value)
				if err != nil || r.Status != http.StatusOK {
					errs <- fmt.Errorf("put: %v %v", err, r)
					return
				}
				end := time.Now()
				samples[w] = append(samples[w], putSample{end: end, lat: end.Sub(t0)})
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		tb.Fatal(err)
	default:
	}
	var all []putSample
	for _, s := range samples {
		all = append(all, s...)
	}
	return all
}

// BenchmarkSnapshotSave measures `httpkv snapshot save` of a 1 GiB store
// (the real binary on both ends, fsync on), alone and while 16 writers
// put, and the writers' throughput during the snapshot against the same
// writers without one, measured just before and just after in the same
// run. HTTPKV_SNAPSHOT_BENCH_MIB sets another size, and
// HTTPKV_SNAPSHOT_BENCH_DIR another directory for the saved files. It
// runs only when asked for, with -benchtime 1x:
//
//	go test -run '^$' -bench BenchmarkSnapshotSave -benchtime 1x -timeout 60m ./tests/
func BenchmarkSnapshotSave(b *testing.B) {
	size := snapshotBenchSize(b)
	s := e2e.StartServer(b, "--unsafe-no-fsync=false", fmt.Sprintf("--quota-backend-bytes=%d", 4*size+(1<<30)))
	fill := make([]byte, 64<<10)
	var fillers sync.WaitGroup
	next := make(chan int)
	for range 8 {
		fillers.Add(1)
		go func() {
			defer fillers.Done()
			rng := rand.New(rand.NewPCG(1, 2))
			v := bytes.Clone(fill)
			for i := range next {
				for j := range v {
					v[j] = byte(rng.Uint32())
				}
				r, err := s.Send(context.Background(), "PUT", e2e.KeyPath(fmt.Sprintf("fill/%06d", i)), v)
				if err != nil || r.Status != http.StatusOK {
					b.Errorf("filling: %v %v", err, r)
					return
				}
			}
		}()
	}
	for i := range int(size / int64(len(fill))) {
		next <- i
	}
	close(next)
	fillers.Wait()
	if b.Failed() {
		return
	}
	// The snapshots go beside the store, on the same disk, unless
	// HTTPKV_SNAPSHOT_BENCH_DIR names another place.
	dir := b.TempDir()
	if d := os.Getenv("HTTPKV_SNAPSHOT_BENCH_DIR"); d != "" {
		var err error
		if dir, err = os.MkdirTemp(d, "snapshot-bench-"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	const writers = 16
	save := func(name string) (start, end time.Time, size int64) {
		file := filepath.Join(dir, name)
		start = time.Now()
		e2e.MustRunHTTPKV(b, nil, "snapshot", "save", "--url", s.URL, file)
		end = time.Now()
		st, err := os.Stat(file)
		if err != nil {
			b.Fatal(err)
		}
		return start, end, st.Size()
	}
	// stream reads GET /v1/snapshot and throws it away: the server's side
	// of a save alone, as when the backup runs on another machine.
	stream := func() (start, end time.Time, size int64) {
		start = time.Now()
		resp, err := s.Streams.Get(s.URL + "/v1/snapshot")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if size, err = io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET /v1/snapshot = %d, %v after %d bytes", resp.StatusCode, err, size)
		}
		return start, time.Now(), size
	}
	mibps := func(size int64, d time.Duration) float64 { return float64(size) / (1 << 20) / d.Seconds() }
	const quiet = 15 * time.Second
	b.ResetTimer()
	for i := range b.N {
		start, end, size := save(fmt.Sprintf("alone-%d.snapshot", i))
		b.Logf("save alone: %d MiB in %.1fs, %.0f MiB/s", size>>20, end.Sub(start).Seconds(), mibps(size, end.Sub(start)))
		b.ReportMetric(mibps(size, end.Sub(start)), "MiB/s-save-alone")

		// The writers run through quiet spans and two snapshots: first
		// the server's side alone (stream), then a whole save on this
		// machine. Their rate without a snapshot is that of the quiet
		// spans, the first second after each snapshot left out.
		done := make(chan struct{})
		loaded := make(chan []putSample)
		t0 := time.Now()
		go func() { loaded <- writeWhile(b, s, writers, done) }()
		time.Sleep(time.Second + quiet)
		s1, e1, n1 := stream()
		time.Sleep(time.Second + quiet)
		s2, e2, n2 := save(fmt.Sprintf("busy-%d.snapshot", i))
		time.Sleep(time.Second + quiet)
		close(done)
		samples := <-loaded
		var without writeLoad
		for _, span := range [][2]time.Time{{t0.Add(time.Second), s1}, {e1.Add(time.Second), s2}, {e2.Add(time.Second), e2.Add(time.Second + quiet)}} {
			l := loadIn(samples, span[0], span[1])
			b.Logf("writers without a snapshot: %v", l)
			without.puts += l.puts
			without.elapsed += l.elapsed
			without.lat = append(without.lat, l.lat...)
		}
		slices.Sort(without.lat)
		streaming, saving := loadIn(samples, s1, e1), loadIn(samples, s2, e2)
		b.Logf("stream under %d writers: %d MiB in %.1fs, %.0f MiB/s", writers, n1>>20, e1.Sub(s1).Seconds(), mibps(n1, e1.Sub(s1)))
		b.Logf("save under %d writers: %d MiB in %.1fs, %.0f MiB/s", writers, n2>>20, e2.Sub(s2).Seconds(), mibps(n2, e2.Sub(s2)))
		b.Logf("writers without a snapshot:     %v", without)
		b.Logf("writers during the stream:      %v", streaming)
		b.Logf("writers during the save:        %v", saving)
		b.Logf("writes during the stream / without: %.2f; during the save / without: %.2f", streaming.rate()/without.rate(), saving.rate()/without.rate())
		b.ReportMetric(mibps(n1, e1.Sub(s1)), "MiB/s-stream-under-writes")
		b.ReportMetric(mibps(n2, e2.Sub(s2)), "MiB/s-save-under-writes")
		b.ReportMetric(streaming.rate()/without.rate(), "stream/without")
		b.ReportMetric(saving.rate()/without.rate(), "save/without")
	}
}
