package lease_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
)

// discard is a Txn that stores nothing and commits as soon as the call
// that wrote returns (commit): it isolates the lessor's own cost from the
// store's. The staged changes run after the call, as the store's
// committer runs them: the lessor stages them holding its lock.
type discard struct{ applies []func() }

func (*discard) UnsafePut(bucket, key, value []byte) error { return nil }
func (*discard) UnsafeDelete(bucket, key []byte) error     { return nil }
func (d *discard) Stage(apply, undo func())                { d.applies = append(d.applies, apply) }
func (*discard) LeaseKeys(int64) ([][]byte, error)         { return nil, nil }

// commit applies what was staged.
func (d *discard) commit() {
	for _, apply := range d.applies {
		apply()
	}
	d.applies = d.applies[:0]
}

// grantDiscarded grants a lease in a discard write.
func grantDiscarded(l *lease.Lessor, d *discard) (lease.Lease, error) {
	g, err := l.Grant(d, 0, 60)
	d.commit()
	return g, err
}

func BenchmarkGrant(b *testing.B) {
	b.Run("lessor", func(b *testing.B) {
		l := lease.New(lease.Config{})
		b.Cleanup(l.Close)
		var d discard
		for b.Loop() {
			if _, err := grantDiscarded(l, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("store", func(b *testing.B) {
		e := newEnv(b, lease.Config{})
		for b.Loop() {
			if _, err := e.manager.Grant(0, 60); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("store-parallel", func(b *testing.B) {
		e := newEnv(b, lease.Config{})
		b.SetParallelism(16) // enough callers for the store to batch commits
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := e.manager.Grant(0, 60); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func BenchmarkKeepAlive(b *testing.B) {
	const n = 10_000
	setup := func(b *testing.B) (*lease.Lessor, []int64) {
		l := lease.New(lease.Config{})
		b.Cleanup(l.Close)
		ids := make([]int64, n)
		var d discard
		for i := range ids {
			g, err := grantDiscarded(l, &d)
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = g.ID
		}
		return l, ids
	}
	b.Run("serial", func(b *testing.B) {
		l, ids := setup(b)
		i := 0
		for b.Loop() {
			if _, err := l.KeepAlive(ids[i%n]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		l, ids := setup(b)
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			i := int(next.Add(1)) * 7919
			for pb.Next() {
				if _, err := l.KeepAlive(ids[i%n]); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
}

// BenchmarkMassExpiry expires 10,000 leases, each with one key, at once
// and times until the last is revoked (ns/op), while one client puts in a
// closed loop; it reports the client's put rate and latency from the
// first report on Expired to the last revoke. The lease clock is fake and
// jumps past the TTL; the loop's ticks, the revokes and the client run in
// real time. "baseline" is the client alone for a second. With the
// default revoke rate the revokes take about ten seconds by design;
// "unbounded" reports them all in one tick.
func BenchmarkMassExpiry(b *testing.B) {
	const n = 10_000
	cases := []struct {
		name string
		rate int // 0: no expiry at all
	}{
		{name: "baseline"},
		{name: "rate=default", rate: lease.DefaultRevokeRate},
		{name: "rate=unbounded", rate: 1 << 30},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c := newClock()
			e := newEnv(b, lease.Config{Now: c.Now, RevokeRate: tc.rate})
			var firstReport atomic.Int64 // UnixNano of the round's first batch
			e.startRevoker(b, func([]int64) { firstReport.CompareAndSwap(0, time.Now().UnixNano()) })
			var (
				lat     []time.Duration
				elapsed time.Duration
				want    int64
			)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if tc.rate > 0 {
					grantLeasedKeys(b, e, n, lease.MinTTL)
					want += n
				}
				firstReport.Store(0)
				b.StartTimer()
				c.Advance(time.Duration(lease.MinTTL) * time.Second)
				from := time.Now()
				done := func() bool { return e.revoked.Load() >= want }
				if tc.rate == 0 {
					done = func() bool { return time.Since(from) >= time.Second }
				}
				puts := putUntil(b, e.store, done)
				if tc.rate > 0 {
					from = time.Unix(0, firstReport.Load())
				}
				elapsed += time.Since(from)
				for _, p := range puts {
					if !p.start.Before(from) {
						lat = append(lat, p.d)
					}
				}
			}
			b.StopTimer()
			reportLatency(b, lat, elapsed)
		})
	}
}

// timedPut is when one put started and how long it took.
type timedPut struct {
	start time.Time
	d     time.Duration
}

// putUntil puts one key after another until done.
func putUntil(tb testing.TB, s *mvcc.Store, done func() bool) []timedPut {
	tb.Helper()
	var puts []timedPut
	for i := 0; !done(); i++ {
		start := time.Now()
		if _, err := s.Put(kv.PutRequest{Key: []byte("client"), Value: fmt.Appendf(nil, "%d", i)}); err != nil {
			tb.Fatalf("client Put #%d = %v", i, err)
		}
		puts = append(puts, timedPut{start: start, d: time.Since(start)})
	}
	return puts
}

// reportLatency reports the client's put rate over elapsed and its put
// latency percentiles.
func reportLatency(b *testing.B, lat []time.Duration, elapsed time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))].Microseconds())
	}
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "puts/s")
	b.ReportMetric(at(0.5), "put-p50-µs")
	b.ReportMetric(at(0.99), "put-p99-µs")
	b.ReportMetric(at(1), "put-max-µs")
}
