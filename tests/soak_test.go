//go:build unix

package tests

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

const (
	// envSoak runs TestSoak for that long (a Go duration: 3m in CI, 30m
	// for a long run). Unset, the soak is skipped: it takes minutes.
	envSoak = "HTTPKV_SOAK"

	soakWatchers    = 1000
	soakReconnects  = 200 // of them reconnect with Last-Event-ID now and then
	soakStalls      = 50  // of them stop reading now and then
	soakRate        = 100 // write operations a second
	soakCompactLag  = 30 * time.Second
	soakWarmUpRatio = 4 // the first quarter is warm-up
)

// soakSample is one reading of the server's figures.
type soakSample struct {
	at                        time.Duration
	rss, heap                 float64 // bytes
	goroutines                float64
	synced, unsynced, victims float64
	revision, compactRevision float64
	pendingEvents             float64
}

// TestSoak runs the server for $HTTPKV_SOAK under a mixed load — puts,
// txns, deletes, range deletes, 16 KiB puts, leases granted, kept alive,
// revoked and left to expire, compactions every few seconds — with 1,000
// SSE watchers: 750 that read all the time, 200 that reconnect with
// Last-Event-ID every 5 to 20 s, and 50 that stop reading for 10 to 90 s
// at a time: the server holds what its bound allows for them, replays
// them from history, and cuts those whose sends wait past its deadline;
// those that resume too late meet a compaction. It checks that every event each watcher read is exactly the
// history of its range (read back before each compaction): no gap, no
// duplicate, every revision whole, across reconnects; that a watcher that
// read all the time never fell behind the compaction; that no request
// failed; and that the server's resident memory and goroutines stay flat
// after the warm-up: their highest in the last quarter within a bound of
// their highest in the second.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak takes minutes: not with -short")
	}
	v := os.Getenv(envSoak)
	if v == "" {
		t.Skipf("set %s to a duration (3m, 30m) to run the soak", envSoak)
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Minute {
		t.Fatalf("%s=%q: want a duration of a minute or more", envSoak, v)
	}
	rng := e2e.TestRand(t, "HTTPKV_SOAK_SEED")
	s := e2e.StartServer(t, "--unsafe-no-fsync=false", "--watch-progress-notify-interval=5s")
	errs := &soakErrors{}
	truth := newSoakTruth(s.Status(t).Revision)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients := soakClients()
	lags := &soakLags{}
	watchers := make([]*soakWatcher, soakWatchers)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	seed := rng.Uint64()
	for i := range watchers {
		kind := soakSteady
		switch {
		case i >= soakWatchers-soakStalls:
			kind = soakStalled
		case i >= soakWatchers-soakStalls-soakReconnects:
			kind = soakReconnect
		}
		w := newSoakWatcher(i, kind, clients, errs, truth, lags, seed)
		watchers[i] = w
		wg.Go(func() { w.run(ctx, s.URL) })
	}
	e2e.Eventually(t, time.Minute, func() (bool, string) {
		n := e2e.WatcherCount(t, s)
		return n >= soakWatchers, fmt.Sprintf("%d of %d watchers are set up", n, soakWatchers)
	})

	load := &soakLoad{s: s, truth: truth, errs: errs, rate: soakRate}
	loadCtx, stopLoad := context.WithCancel(ctx)
	waitLoad := load.run(loadCtx, 4, rng.Uint64())
	start := time.Now()
	every := min(max(d/36, 5*time.Second), time.Minute)
	var (
		samples   []soakSample
		revs      []soakRev // the revision at each check, for compactions
		compacted int64
		compacts  int
	)
	for tick := 1; time.Since(start) < d && errs.count() == 0; tick++ {
		time.Sleep(time.Until(start.Add(time.Duration(tick) * every)))
		cur := s.Status(t).Revision
		truth.extend(t, s, errs, cur)
		truth.trim(verifyAll(watchers, truth))
		// Compact at the revision of soakCompactLag ago.
		revs = append(revs, soakRev{time.Now(), cur})
		for len(revs) > 1 && time.Since(revs[1].at) >= soakCompactLag {
			revs = revs[1:]
		}
		if r := revs[0]; time.Since(r.at) >= soakCompactLag && r.rev > compacted {
			physical := compacts%2 == 0
			resp, err := s.Send(ctx, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d,"physical":%v}`, r.rev, physical)))
			if err != nil || resp.Status != http.StatusOK {
				errs.add("POST /v1/compact at %d: %v %v", r.rev, err, resp)
			}
			compacted = r.rev
			compacts++
		}
		samples = append(samples, soakSampleNow(t, s, time.Since(start)))
	}
	stopLoad()
	waitLoad()

	// The end: every watcher, the stalled ones reading again, reaches the
	// last revision, and all they read is compared.
	final := s.Status(t).Revision
	for _, w := range watchers {
		w.unstall.Store(true)
	}
	e2e.Eventually(t, 3*time.Minute, func() (bool, string) {
		behind := 0
		for _, w := range watchers {
			if w.lastIDNow() < final {
				behind++
			}
		}
		return behind == 0 || errs.count() > 0, fmt.Sprintf("%d watchers have not reached revision %d", behind, final)
	})
	truth.extend(t, s, errs, final)
	verifyAll(watchers, truth)
	cancel()
	wg.Wait()

	reportSoak(t, d, load, watchers, lags, samples, compacts)
	if n := errs.count(); n > 0 {
		t.Errorf("%d errors; the first:\n%s", n, strings.Join(errs.first, "\n"))
	}
	checkSoakFlat(t, samples, d)
	checkSoakWatchers(t, watchers)
}

// soakRev is the current revision at a moment.
type soakRev struct {
	at  time.Time
	rev int64
}

// verifyAll verifies every watcher and returns the lowest revision all
// have been compared up to.
func verifyAll(watchers []*soakWatcher, tr *soakTruth) int64 {
	low := int64(-1)
	for _, w := range watchers {
		v := w.verify(tr)
		if low < 0 || v < low {
			low = v
		}
	}
	return low
}

// soakSampleNow reads the server's figures from /metrics.
func soakSampleNow(tb testing.TB, s *e2e.Server, at time.Duration) soakSample {
	tb.Helper()
	m := e2e.ParseMetrics(s.Do(tb, "GET", "/metrics", nil).Want(tb, http.StatusOK).Body)
	return soakSample{
		at:              at,
		rss:             m["process_resident_memory_bytes"],
		heap:            m["go_memstats_heap_inuse_bytes"],
		goroutines:      m["go_goroutines"],
		synced:          m[`httpkv_watchers{group="synced"}`],
		unsynced:        m[`httpkv_watchers{group="unsynced"}`],
		victims:         m[`httpkv_watchers{group="victims"}`],
		revision:        m["httpkv_revision"],
		compactRevision: m["httpkv_compact_revision"],
		pendingEvents:   m["httpkv_watch_pending_events"],
	}
}

// checkSoakFlat fails if resident memory or goroutines grew after the
// warm-up: the highest of the last quarter against the highest of the
// second. The bounds leave room for the garbage collector's swings and
// for the watchers that happen to be stalled or reconnecting at a
// sample; a leak of a goroutine per reconnect, or of the memory of a
// watcher, passes them within minutes.
func checkSoakFlat(tb testing.TB, samples []soakSample, d time.Duration) {
	tb.Helper()
	peak := func(from, to time.Duration, f func(soakSample) float64) float64 {
		var m float64
		for _, s := range samples {
			if s.at >= from && s.at <= to {
				m = max(m, f(s))
			}
		}
		return m
	}
	median := func(from, to time.Duration, f func(soakSample) float64) float64 {
		var v []float64
		for _, s := range samples {
			if s.at >= from && s.at <= to {
				v = append(v, f(s))
			}
		}
		if len(v) == 0 {
			return 0
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	quarter, end := d/soakWarmUpRatio, d+time.Minute
	rss := func(s soakSample) float64 { return s.rss }
	gr := func(s soakSample) float64 { return s.goroutines }
	rssBase, rssEnd, rssPeak := peak(quarter, 2*quarter, rss), median(3*quarter, end, rss), peak(3*quarter, end, rss)
	grBase, grEnd, grPeak := peak(quarter, 2*quarter, gr), median(3*quarter, end, gr), peak(3*quarter, end, gr)
	if rssBase == 0 || grBase == 0 || rssEnd == 0 {
		tb.Fatalf("no samples in the second or the last quarter of the soak")
	}
	const mib = 1 << 20
	tb.Logf("resident memory: at most %.0f MiB in the second quarter; %.0f MiB (median) and %.0f MiB at most in the last quarter; goroutines: %.0f; %.0f and %.0f",
		rssBase/mib, rssEnd/mib, rssPeak/mib, grBase, grEnd, grPeak)
	// A leak raises the whole last quarter; a burst of the garbage
	// collector or of stalled watchers only one sample.
	if rssEnd > rssBase*1.2+16*mib || rssPeak > rssBase*1.5+32*mib {
		tb.Errorf("resident memory grew from at most %.0f MiB in the second quarter to %.0f MiB (median) and %.0f MiB at most in the last: more than 20%% + 16 MiB, or 50%% + 32 MiB",
			rssBase/mib, rssEnd/mib, rssPeak/mib)
	}
	if grEnd > grBase*1.1+50 || grPeak > grBase*1.2+100 {
		tb.Errorf("goroutines grew from at most %.0f in the second quarter to %.0f (median) and %.0f at most in the last: more than 10%% + 50, or 20%% + 100",
			grBase, grEnd, grPeak)
	}
}

// checkSoakWatchers fails unless each kind of watcher did what it is for:
// read events, reconnected, and, for the stalled ones, made the server
// give up on them (the stream cut, or compacted) at least once.
func checkSoakWatchers(tb testing.TB, watchers []*soakWatcher) {
	tb.Helper()
	var events, reconnects, ends [soakKindsNumber]int
	for _, w := range watchers {
		w.mu.Lock()
		events[w.kind] += w.events
		reconnects[w.kind] += w.reconnects
		ends[w.kind] += w.cut + w.compacted
		w.mu.Unlock()
	}
	for k := range soakKindsNumber {
		if events[k] == 0 {
			tb.Errorf("the %v watchers read no event", k)
		}
	}
	if reconnects[soakReconnect] == 0 {
		tb.Errorf("the reconnecting watchers never reconnected")
	}
	if ends[soakStalled] == 0 {
		tb.Errorf("no stalled watcher was ever cut or compacted: the stalls did not hold the server up")
	}
}

// reportSoak logs what the soak did and its samples as a table.
func reportSoak(tb testing.TB, d time.Duration, load *soakLoad, watchers []*soakWatcher, lags *soakLags, samples []soakSample, compacts int) {
	tb.Helper()
	load.mu.Lock()
	var ops []string
	for op, n := range load.ops {
		ops = append(ops, fmt.Sprintf("%s %d", op, n))
	}
	load.mu.Unlock()
	slices.Sort(ops)
	tb.Logf("soak of %v: %d compactions; operations: %s", d, compacts, strings.Join(ops, ", "))
	var stats [soakKindsNumber]struct{ n, events, reconnects, compacted, cut, stalls int }
	for _, w := range watchers {
		w.mu.Lock()
		st := &stats[w.kind]
		st.n++
		st.events += w.events
		st.reconnects += w.reconnects
		st.compacted += w.compacted
		st.cut += w.cut
		st.stalls += w.stalls
		w.mu.Unlock()
	}
	for k, st := range stats {
		p50, p99, most := lags.quantiles(soakKind(k))
		tb.Logf("%d %v watchers: %d events read and checked, %d reconnects, %d stalls, %d cut by the server, %d compacted; read %v after the write's answer (median), %v (99th percentile), %v at most",
			st.n, soakKind(k), st.events, st.reconnects, st.stalls, st.cut, st.compacted, p50, p99, most)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| time | RSS MiB | heap MiB | goroutines | synced | unsynced | victims | pending events | revision |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "| %v | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n",
			s.at.Round(time.Second), s.rss/(1<<20), s.heap/(1<<20), s.goroutines, s.synced, s.unsynced, s.victims, s.pendingEvents, s.revision)
	}
	tb.Logf("samples:\n%s", b.String())
}
