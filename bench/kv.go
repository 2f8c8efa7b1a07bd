package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// keyNamer names the tool's keys: the prefix then a zero-padded number,
// as long as --key-size asks, or as the largest number needs.
type keyNamer struct {
	prefix string
	width  int
}

func newKeyNamer(prefix string, keySize, count int) keyNamer {
	digits := len(strconv.Itoa(max(count-1, 0)))
	return keyNamer{prefix: prefix, width: max(keySize-len(prefix), digits)}
}

func (k keyNamer) name(i int) string {
	s := strconv.Itoa(i)
	return k.prefix + strings.Repeat("0", max(k.width-len(s), 0)) + s
}

// plan spreads requests over clients: a fixed total, or as many as fit in
// a duration, at an optional total rate.
type plan struct {
	requests int64 // 0: until deadline
	deadline time.Time
	interval time.Duration // per client; 0 is flat out
	issued   atomic.Int64
}

func newPlan(cfg config, start time.Time) *plan {
	p := &plan{requests: int64(cfg.requests)}
	if p.requests == 0 {
		p.deadline = start.Add(cfg.duration)
	}
	if cfg.rate > 0 {
		p.interval = time.Duration(float64(cfg.clients) / cfg.rate * float64(time.Second))
	}
	return p
}

// next waits for a client's k-th request slot (k from 0) and reports
// whether there is one.
func (p *plan) next(ctx context.Context, start time.Time, k int) bool {
	if p.interval > 0 {
		if d := time.Until(start.Add(time.Duration(k) * p.interval)); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
		}
	}
	if ctx.Err() != nil {
		return false
	}
	if p.requests > 0 {
		return p.issued.Add(1) <= p.requests
	}
	return time.Now().Before(p.deadline)
}

// result is one row of the report.
type result struct {
	op      string
	count   int64         // operations that succeeded
	errors  int64         // operations that failed (watch delivery: events missing)
	elapsed time.Duration // from the first operation to the last
	hist    *Histogram
}

// errorLog keeps the first error of a run and counts the rest.
type errorLog struct {
	n     atomic.Int64
	once  sync.Once
	first error
}

func (e *errorLog) add(err error) {
	e.n.Add(1)
	e.once.Do(func() { e.first = err })
}

// tooMany reports whether a run should stop: everything it tried failed.
func (e *errorLog) tooMany(ok int64) bool { return ok == 0 && e.n.Load() >= 100 }

// runKV runs put, get, range or txn: cfg.clients loops, each with one
// request in flight.
func runKV(ctx context.Context, cfg config, srv server, stdout io.Writer) (result, error) {
	keys := newKeyNamer(cfg.prefix, cfg.keySize, max(cfg.keys, cfg.rangeKeys, cfg.clients))
	value := bytes.Repeat([]byte{'x'}, cfg.valueSize)

	switch cfg.workload {
	case workloadGet:
		if err := preload(ctx, cfg, srv, keys, cfg.keys, value); err != nil {
			return result{}, err
		}
	case workloadRange:
		if err := preload(ctx, cfg, srv, keys, cfg.rangeKeys, value); err != nil {
			return result{}, err
		}
		n, err := srv.Range(ctx, cfg.prefix, cfg.rangeKeys, true)
		if err != nil {
			return result{}, err
		}
		if n != cfg.rangeKeys {
			return result{}, fmt.Errorf("range: %q holds %d keys, not --range-keys=%d: give a fresh --prefix", cfg.prefix, n, cfg.rangeKeys)
		}
	}

	hists := make([]Histogram, cfg.clients)
	var (
		errs  errorLog
		ok    atomic.Int64
		lastN atomic.Int64 // unix nanoseconds of the last completion
		wg    sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cpu, err := startCPU(cfg.serverPID)
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	p := newPlan(cfg, start)
	for c := range cfg.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op, err := newKVOp(ctx, cfg, srv, keys, c, value)
			if err != nil {
				errs.add(err)
				return
			}
			for k := 0; p.next(ctx, start, k); k++ {
				t := time.Now()
				err := op(k)
				done := time.Now()
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					errs.add(err)
					if errs.tooMany(ok.Load()) {
						cancel()
					}
					continue
				}
				hists[c].Record(done.Sub(t))
				ok.Add(1)
				storeMax(&lastN, done.UnixNano())
			}
		}()
	}
	wg.Wait()
	cpu.report(stdout, ok.Load(), "request")
	r := result{op: cfg.workload, count: ok.Load(), errors: errs.n.Load(), hist: new(Histogram)}
	for i := range hists {
		r.hist.Merge(&hists[i])
	}
	if last := lastN.Load(); last > 0 {
		r.elapsed = time.Unix(0, last).Sub(start)
	}
	if errs.first != nil {
		err := fmt.Errorf("%d of %d requests failed, the first with: %w", r.errors, r.errors+r.count, errs.first)
		if r.count == 0 {
			return r, err
		}
		return r, errors.Join(errPartial, err)
	}
	return r, nil
}

// errPartial marks a run that measured something although some requests
// failed: the report is still printed.
var errPartial = errors.New("some requests failed")

// newKVOp returns client c's request function for the workload; its
// argument counts the client's requests.
func newKVOp(ctx context.Context, cfg config, srv server, keys keyNamer, c int, value []byte) (func(k int) error, error) {
	switch cfg.workload {
	case workloadPut:
		// Clients interleave over the key space.
		return func(k int) error {
			_, err := srv.Put(ctx, keys.name((k*cfg.clients+c)%cfg.keys), value)
			return err
		}, nil
	case workloadGet:
		rnd := rand.New(rand.NewPCG(uint64(c), 1))
		return func(int) error { return srv.Get(ctx, keys.name(rnd.IntN(cfg.keys))) }, nil
	case workloadRange:
		return func(int) error {
			_, err := srv.Range(ctx, cfg.prefix, cfg.rangeKeys, false)
			return err
		}, nil
	case workloadTxn:
		// Each client owns one key and compare-and-puts it on its last
		// known mod revision, so every txn should succeed.
		key := keys.name(c)
		rev, err := srv.Put(ctx, key, value)
		if err != nil {
			return nil, err
		}
		return func(int) error {
			r, ok, err := srv.CompareAndPut(ctx, key, rev, value)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("txn on %q: compare on mod revision %d failed", key, rev)
			}
			rev = r
			return nil
		}, nil
	}
	return nil, fmt.Errorf("no such workload %q", cfg.workload)
}

// preload puts keys 0..n-1 with cfg.clients writers.
func preload(ctx context.Context, cfg config, srv server, keys keyNamer, n int, value []byte) error {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		errs errorLog
	)
	for range min(cfg.clients, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n && errs.n.Load() == 0; i = int(next.Add(1) - 1) {
				if _, err := srv.Put(ctx, keys.name(i), value); err != nil {
					errs.add(err)
				}
			}
		}()
	}
	wg.Wait()
	if errs.first != nil {
		return fmt.Errorf("preloading %d keys: %w", n, errs.first)
	}
	return nil
}

// storeMax raises a to v if v is larger.
func storeMax(a *atomic.Int64, v int64) {
	for {
		m := a.Load()
		if v <= m || a.CompareAndSwap(m, v) {
			return
		}
	}
}
