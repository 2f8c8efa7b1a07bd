package auth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Failed token requests allowed per user and per client address: a burst
// of failedBurst, then one every failedEvery.
const (
	failedBurst = 5
	failedEvery = 2 * time.Second
	// limiterIdle: a limiter unused this long is forgotten.
	limiterIdle = 10 * time.Minute
)

// limiter rate-limits failed token requests by key ("user:x", "addr:y").
// Only failures spend tokens; a request is refused while either its user
// or its address has none left. An attempt under way holds a token of
// each key until it ends, so concurrent attempts cannot all pass the
// check before the first failure is counted.
type limiter struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*limiterEntry
}

type limiterEntry struct {
	l    *rate.Limiter
	used time.Time
	// pending counts the attempts under way, each holding a token.
	pending int
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, m: make(map[string]*limiterEntry)}
}

func (l *limiter) entry(key string, now time.Time) *limiterEntry {
	e, ok := l.m[key]
	if !ok {
		if len(l.m) > 10000 {
			for k, old := range l.m {
				if old.pending == 0 && now.Sub(old.used) > limiterIdle {
					delete(l.m, k)
				}
			}
		}
		e = &limiterEntry{l: rate.NewLimiter(rate.Every(failedEvery), failedBurst)}
		l.m[key] = e
	}
	e.used = now
	return e
}

// begin reports whether an attempt for these keys may go on; if so, it
// holds a token of each key until end.
func (l *limiter) begin(keys ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		e := l.entry(k, now)
		if e.l.TokensAt(now) < float64(e.pending+1) {
			return false
		}
	}
	for _, k := range keys {
		l.entry(k, now).pending++
	}
	return true
}

// end releases the tokens begin held, spending them if the attempt failed.
func (l *limiter) end(failed bool, keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		e := l.entry(k, now)
		e.pending--
		if failed {
			e.l.AllowN(now, 1)
		}
	}
}
