package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// catchupPoll is how often the catch-up run looks at its watcher's count;
// the time it reports comes from the receipt of the last event, not from
// the poll.
const catchupPoll = 5 * time.Millisecond

// runCatchup measures a watcher far behind: cfg.clients writers make
// cfg.requests revisions under the prefix, then one watcher opens from
// the first of them, and the run times it from its request to the receipt
// of the last event. A server that reads its history in pages and streams
// them as fast as the connection takes them does well here; one that
// replays history in small rounds between other work does not.
func runCatchup(ctx context.Context, cfg config, srv server, stdout io.Writer) (result, error) {
	first, last, err := writeRevisions(ctx, cfg, srv)
	if err != nil {
		return result{}, err
	}
	want := last - first + 1
	fmt.Fprintf(stdout, "wrote revisions %d to %d\n", first, last)

	cpu, err := startCPU(cfg.serverPID)
	if err != nil {
		return result{}, err
	}
	wctx, stop := context.WithCancel(ctx)
	w := &watcher{hist: &Histogram{}}
	watchErr := make(chan error, 1)
	start := time.Now()
	go func() { watchErr <- srv.Watch(wctx, cfg.prefix, first, w, func() {}) }()
	defer func() {
		stop()
		<-watchErr
	}()

	deadline := time.NewTimer(cfg.drainTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(catchupPoll)
	defer tick.Stop()
	for w.events.Load() < want {
		select {
		case <-tick.C:
		case err := <-watchErr:
			watchErr <- err // for the deferred receive
			return result{}, fmt.Errorf("the watch ended after %d of %d events: %w", w.events.Load(), want, err)
		case <-deadline.C:
			return result{}, fmt.Errorf("%w: %d of %d events within --drain-timeout=%s", errPartial, w.events.Load(), want, cfg.drainTimeout)
		case <-ctx.Done():
			return result{}, ctx.Err()
		}
	}
	took := time.Duration(w.last.Load() - start.UnixNano())
	cpu.report(stdout, want, "event")
	h := &Histogram{}
	h.Record(took)
	return result{op: "catchup", count: w.events.Load(), elapsed: took, hist: h}, nil
}

// writeRevisions puts cfg.requests values under the prefix, cycling over
// cfg.keys keys, and returns the first and last revision they made. Every
// put makes one revision, and nothing else writes under the prefix, so
// the watch from first sees exactly last-first+1 events.
func writeRevisions(ctx context.Context, cfg config, srv server) (first, last int64, err error) {
	keys := newKeyNamer(cfg.prefix, cfg.keySize, cfg.keys)
	value := bytes.Repeat([]byte{'x'}, cfg.valueSize)
	var (
		next   atomic.Int64
		lo, hi atomic.Int64
		errs   errorLog
		wg     sync.WaitGroup
	)
	lo.Store(math.MaxInt64)
	for range min(cfg.clients, cfg.requests) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < cfg.requests && errs.n.Load() == 0; i = int(next.Add(1) - 1) {
				rev, err := srv.Put(ctx, keys.name(i%cfg.keys), value)
				if err != nil {
					errs.add(err)
					continue
				}
				storeMax(&hi, rev)
				storeMin(&lo, rev)
			}
		}()
	}
	wg.Wait()
	if errs.first != nil {
		return 0, 0, fmt.Errorf("writing %d revisions: %w", cfg.requests, errs.first)
	}
	if n := hi.Load() - lo.Load() + 1; n != int64(cfg.requests) {
		return 0, 0, fmt.Errorf("%d puts made revisions %d to %d: something else writes to the server", cfg.requests, lo.Load(), hi.Load())
	}
	return lo.Load(), hi.Load(), nil
}

// storeMin lowers a to v if v is smaller.
func storeMin(a *atomic.Int64, v int64) {
	for {
		m := a.Load()
		if v >= m || a.CompareAndSwap(m, v) {
			return
		}
	}
}
