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
// or its address has none left.
type limiter struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*limiterEntry
}

type limiterEntry struct {
	l    *rate.Limiter
	used time.Time
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, m: make(map[string]*limiterEntry)}
}

func (l *limiter) entry(key string, now time.Time) *limiterEntry {
	e, ok := l.m[key]
	if !ok {
		if len(l.m) > 10000 {
			for k, old := range l.m {
				if now.Sub(old.used) > limiterIdle {
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

// allowed reports whether a request for these keys may try at all.
func (l *limiter) allowed(keys ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		if l.entry(k, now).l.TokensAt(now) < 1 {
			return false
		}
	}
	return true
}

// failed spends a token for each key.
func (l *limiter) failed(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		l.entry(k, now).l.AllowN(now, 1)
	}
}
