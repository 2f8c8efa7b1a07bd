package etcd

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// figures are the cluster's figures as last read (by Status and Alarms),
// for Stats, which reads nothing from etcd: metrics are scraped often.
type figures struct {
	mu     sync.Mutex
	tried  time.Time // when Stats last read them, or tried to
	sizes  kv.Stats  // DBSize and DBSizeInUse
	leases int
	alarms []kv.Alarm
}

// figuresMaxAge is how long Stats uses figures before it reads them
// again: a scrape of the metrics costs etcd a few reads at most this
// often.
const figuresMaxAge = time.Second

func (f *figures) setAlarms(a []kv.Alarm) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.alarms = a
}

func (f *figures) set(sizes kv.Stats, leases int, alarms []kv.Alarm) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sizes, f.leases, f.alarms = sizes, leases, alarms
}

// due reports whether Stats should read the figures again, and if so
// takes the turn: concurrent scrapes, and scrapes while etcd does not
// answer, read at most once per figuresMaxAge.
func (f *figures) due() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if time.Since(f.tried) <= figuresMaxAge {
		return false
	}
	f.tried = time.Now()
	return true
}

// readFigures reads the cluster's sizes and alarms, and the namespace's
// leases.
func (b *Backend) readFigures(ctx context.Context) error {
	sizes, err := b.memberSizes(ctx)
	if err != nil {
		return err
	}
	leases, err := b.countLeases(ctx)
	if err != nil {
		return err
	}
	alarms, err := b.Alarms(ctx)
	if err != nil {
		return err
	}
	b.figures.set(sizes, int(leases), alarms)
	return nil
}

// Stats are the gateway's figures: its revision, the compact revision it
// knows, its watchers, the namespace's leases, and the cluster's sizes
// and alarms, read
// again when older than figuresMaxAge (and kept as they were when etcd
// does not answer).
func (b *Backend) Stats() kv.Stats {
	if b.figures.due() {
		ctx, cancel := context.WithTimeout(b.ctx, b.opts.RequestTimeout)
		_ = b.readFigures(ctx)
		cancel()
	}
	b.figures.mu.Lock()
	st := kv.Stats{
		DBSize: b.figures.sizes.DBSize, DBSizeInUse: b.figures.sizes.DBSizeInUse,
		Leases: b.figures.leases, Alarms: b.figures.alarms,
	}
	b.figures.mu.Unlock()
	st.Revision, st.CompactRevision = b.Rev(), b.compact.Load()
	ws := b.sched.Stats()
	st.Watchers = kv.WatcherStats{
		Synced: ws.Synced, Unsynced: ws.Unsynced, Victims: ws.Victims,
		PendingEvents: ws.PendingEvents, PendingBytes: ws.PendingBytes, EventsSent: ws.EventsSent,
	}
	if b.cache != nil {
		keys, size := b.cache.stats()
		st.ReadCache = &kv.ReadCacheStats{Keys: keys, Bytes: size, Reads: b.cache.served.Load(), Checks: b.freshness.checks.Load()}
	}
	return st
}

// Status reads the figures: the namespace's keys at the current revision
// and its leases, the largest member's sizes, the cluster's alarms, and
// etcd's compact revision.
func (b *Backend) Status(ctx context.Context) (kv.Status, error) {
	var st kv.Status
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.kv.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithCountOnly())
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		st.Revision, st.Keys = resp.Header.Revision, resp.Count
		return nil
	})
	if err != nil {
		return kv.Status{}, err
	}
	if err := b.readFigures(ctx); err != nil {
		return kv.Status{}, err
	}
	compact, err := b.compactRevision(ctx)
	if err != nil {
		return kv.Status{}, err
	}
	rev := st.Revision
	st.Stats = b.Stats()
	st.Revision, st.CompactRevision = rev, compact
	return st, nil
}
