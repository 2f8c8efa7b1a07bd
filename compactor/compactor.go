package compactor

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// Store is what the compactor needs of the store.
type Store interface {
	Rev() int64
	CompactRev() int64
	Compact(rev int64) (<-chan error, error)
}

// Mode is how the retention is read.
type Mode string

const (
	Periodic Mode = "periodic"
	Revision Mode = "revision"
)

// RevisionInterval is how often revision mode compacts.
const RevisionInterval = 5 * time.Minute

// Config is a parsed --auto-compaction-mode and --auto-compaction-retention.
type Config struct {
	Mode      Mode
	Period    time.Duration // periodic mode
	Revisions int64         // revision mode
}

// Enabled reports whether the config asks for compaction at all.
func (c Config) Enabled() bool { return c.Period > 0 || c.Revisions > 0 }

// ParseConfig reads a mode and a retention: for periodic, a duration
// ("1h", "30m") or a bare number of hours as in etcd; for revision, a
// number of revisions. "0" turns compaction off.
func ParseConfig(mode, retention string) (Config, error) {
	c := Config{Mode: Mode(mode)}
	switch c.Mode {
	case Periodic:
		if n, err := strconv.ParseInt(retention, 10, 64); err == nil {
			if n < 0 {
				return c, fmt.Errorf("auto-compaction-retention must not be negative")
			}
			c.Period = time.Duration(n) * time.Hour
			return c, nil
		}
		d, err := time.ParseDuration(retention)
		if err != nil || d < 0 {
			return c, fmt.Errorf("auto-compaction-retention %q is neither a duration nor a number of hours", retention)
		}
		c.Period = d
	case Revision:
		n, err := strconv.ParseInt(retention, 10, 64)
		if err != nil || n < 0 {
			return c, fmt.Errorf("auto-compaction-retention %q is not a number of revisions", retention)
		}
		c.Revisions = n
	default:
		return c, fmt.Errorf("auto-compaction-mode must be periodic or revision, not %q", mode)
	}
	return c, nil
}

// Compactor runs the compaction schedule until Close.
type Compactor struct {
	cfg   Config
	store Store
	now   func() time.Time
	// OnError receives compaction failures other than "already
	// compacted"; nil ignores them.
	onError  func(error)
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// New starts a compactor; with a config that is not Enabled it does
// nothing until Close.
func New(cfg Config, s Store, onError func(error)) *Compactor {
	c := &Compactor{cfg: cfg, store: s, now: time.Now, onError: onError,
		stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// Close stops the compactor and waits for it. It is idempotent and safe
// to call from several goroutines at once: each returns once the loop has
// ended.
func (c *Compactor) Close() {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.done
}

func (c *Compactor) run() {
	defer close(c.done)
	if !c.cfg.Enabled() {
		<-c.stop
		return
	}
	interval := RevisionInterval
	if c.cfg.Mode == Periodic {
		interval = min(max(c.cfg.Period/10, time.Second), time.Hour)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var samples []sample
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		var target int64
		if c.cfg.Mode == Periodic {
			samples, target = periodicTarget(samples, sample{at: c.now(), rev: c.store.Rev()}, c.cfg.Period)
		} else {
			target = c.store.Rev() - c.cfg.Revisions
		}
		if target > c.store.CompactRev() {
			if _, err := c.store.Compact(target); err != nil && c.onError != nil && !errors.Is(err, kv.ErrCompacted) {
				c.onError(err)
			}
		}
	}
}

type sample struct {
	at  time.Time
	rev int64
}

// periodicTarget adds s to the samples and returns the revision to compact
// at: the newest sample at least period old (0 if none), dropping the
// samples older than it.
func periodicTarget(samples []sample, s sample, period time.Duration) ([]sample, int64) {
	samples = append(samples, s)
	cut := -1
	for i, x := range samples {
		if s.at.Sub(x.at) >= period {
			cut = i
		}
	}
	if cut < 0 {
		return samples, 0
	}
	return samples[cut:], samples[cut].rev
}
