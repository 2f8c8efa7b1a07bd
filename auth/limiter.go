package auth

import (
	"crypto/sha256"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"
)

// Failed token requests are limited per (user, client address): a burst
// of failedBurst, then one every failedEvery, so that no one guesses a
// user's password quickly from one address, while the right password
// from another address still works (a limit per user alone would let
// anyone lock a user out). They are also limited per client address
// across users, a burst of addrBurst then one every addrEvery, so that
// one address cannot try a password on every user.
const (
	failedBurst = 5
	failedEvery = 2 * time.Second
	addrBurst   = 20
	addrEvery   = time.Second
	// limiterEntries bounds the table; the least recently used entries
	// go first. An entry is a fixed-size key and a rate.Limiter, a few
	// hundred bytes, whatever name and address it counts.
	limiterEntries = 10_000
)

// limitKey names what a limiter entry counts: a hash of the kind ('u'
// for a user at an address, 'a' for an address) and the names, so that
// every key has the same small size.
type limitKey [sha256.Size]byte

func userAddrKey(user, addr string) limitKey {
	return sha256.Sum256([]byte("u\x00" + user + "\x00" + addr))
}

func addrKey(addr string) limitKey { return sha256.Sum256([]byte("a\x00" + addr)) }

// clientNet is the address failures are counted against: the address
// itself for IPv4, its /64 for IPv6 (one host commonly holds a whole
// /64), the string as given for anything else.
func clientNet(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// limiter rate-limits failed token requests by key. Only failures spend
// tokens; a request is refused while any of its keys has none left. An
// attempt under way holds a token of each key until it ends, so
// concurrent attempts cannot all pass the check before the first failure
// is counted.
type limiter struct {
	now func() time.Time
	mu  sync.Mutex
	lru *simplelru.LRU[limitKey, *limiterEntry]
}

type limiterEntry struct {
	l *rate.Limiter
	// pending counts the attempts under way, each holding a token.
	pending int
}

func newLimiter(now func() time.Time, size int) *limiter {
	lru, err := simplelru.NewLRU[limitKey, *limiterEntry](size, nil)
	if err != nil {
		panic(err) // size is a positive constant
	}
	return &limiter{now: now, lru: lru}
}

// attempt is the keys of one token request: its user at its address,
// and its address.
type attempt struct {
	keys [2]limitKey
}

func newAttempt(user, clientAddr string) attempt {
	n := clientNet(clientAddr)
	return attempt{keys: [2]limitKey{userAddrKey(user, n), addrKey(n)}}
}

// entry returns the entry of key i of a, made if absent (the least
// recently used one goes if the table is full), and marks it used.
func (l *limiter) entry(a *attempt, i int) *limiterEntry {
	if e, ok := l.lru.Get(a.keys[i]); ok {
		return e
	}
	e := &limiterEntry{l: rate.NewLimiter(rate.Every(failedEvery), failedBurst)}
	if i == 1 {
		e.l = rate.NewLimiter(rate.Every(addrEvery), addrBurst)
	}
	l.lru.Add(a.keys[i], e)
	return e
}

// begin reports whether the attempt may go on; if so, it holds a token of
// each of its keys until end.
func (l *limiter) begin(a *attempt) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	// The address first: an address out of tokens makes no entry for
	// each name it tries.
	for _, i := range []int{1, 0} {
		e := l.entry(a, i)
		if e.l.TokensAt(now) < float64(e.pending+1) {
			return false
		}
	}
	for i := range a.keys {
		l.entry(a, i).pending++
	}
	return true
}

// end releases the tokens begin held, spending them if the attempt
// failed. An entry evicted meanwhile comes back, with the failure
// counted.
func (l *limiter) end(a *attempt, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for i := range a.keys {
		e := l.entry(a, i)
		e.pending = max(e.pending-1, 0)
		if failed {
			e.l.AllowN(now, 1)
		}
	}
}

// len returns how many entries the table holds.
func (l *limiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}
