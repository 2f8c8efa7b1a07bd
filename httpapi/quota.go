package httpapi

import (
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream/multi"
)

// What clients hold for as long as they like, counted for the whole
// server: the connections streams keep open (--max-stream-connections)
// and the watchers (--max-watchers). Each also has a share for one user,
// or one client address with auth off (the -per-user flags), so that no
// one client takes it all; but addresses are cheap, and what protects
// the server's memory and descriptors is the bound for all, which holds
// whatever the number of users and addresses.

// quota counts units held by clients against a bound for all of them and
// one for each key (a user, or a client address).
type quota struct {
	all, per int // the bounds
	// what the bounds are, for the answers that refuse
	allFlag, perFlag, what string

	mu    sync.Mutex
	n     int
	byKey map[string]int
}

func newQuota(all, per int, what, allFlag, perFlag string) *quota {
	return &quota{all: all, per: min(per, all), what: what, allFlag: allFlag, perFlag: perFlag, byKey: make(map[string]int)}
}

// acquire counts n more units for key, or answers why not: a 429
// too_many_requests naming the bound.
func (q *quota) acquire(key string, n int) *apiError {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.n+n > q.all:
		return errorf(kv.CodeTooManyRequests, "the server has %d %s, its most (%s): retry later", q.n, q.what, q.allFlag)
	case q.byKey[key]+n > q.per:
		return errorf(kv.CodeTooManyRequests, "at most %d %s per user, or per client address with auth off (%s)", q.per, q.what, q.perFlag)
	}
	q.n += n
	q.byKey[key] += n
	return nil
}

// recorded checks n more watchers against the bounds counted in the
// deployment's stream records (c) rather than here: over a multi.Store,
// a stream's watchers are held in its record, served by a gateway or
// not, so the bound for all is the deployment's and the bound for one
// the owner's across every gateway.
func (q *quota) recorded(c kv.StreamCounts, n int) *apiError {
	switch {
	case c.Watchers+int64(n) > int64(q.all):
		return errorf(kv.CodeTooManyRequests, "the deployment's streams have %d %s, its most (%s): retry later", c.Watchers, q.what, q.allFlag)
	case c.GroupWatchers+int64(n) > int64(q.per):
		return errorf(kv.CodeTooManyRequests, "at most %d %s per user, or per client address with auth off (%s)", q.per, q.what, q.perFlag)
	}
	return nil
}

// release gives back n units of key.
func (q *quota) release(key string, n int) {
	if n == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.n -= n
	if q.byKey[key] -= n; q.byKey[key] <= 0 {
		delete(q.byKey, key)
	}
}

// held is the units held by all.
func (q *quota) held() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// watcherQuota is the quota of watchers as the stream engine counts its
// own against it (multi.Quota).
type watcherQuota struct{ q *quota }

func (w watcherQuota) Acquire(key string, n int) error {
	if aerr := w.q.acquire(key, n); aerr != nil {
		return aerr
	}
	return nil
}

func (w watcherQuota) Release(key string, n int) { w.q.release(key, n) }

func (w watcherQuota) Recorded(c kv.StreamCounts, n int) error {
	if aerr := w.q.recorded(c, n); aerr != nil {
		return aerr
	}
	return nil
}

// clientKey is what r counts against in a quota: its user while auth is
// on, else its client's address (an IPv6 client by its /64, as one host
// commonly holds a whole /64).
func clientKey(o multi.Owner, r *http.Request) string {
	if o.AuthOn {
		return "user " + o.User
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		host = ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return "addr " + host
}

// refuse answers a 429 for a bound on what clients hold, closing the
// connection after it: a client past its bound should not keep a
// connection open by being refused.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err *apiError) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", "1")
	h.writeError(w, r, err)
}

// admitStream counts a new stream of r against --max-stream-connections,
// and the watchers it starts with (one for a single watch, none for the
// reader of a stream of many watchers, whose watchers are counted as they
// are added) against --max-watchers; it answers 429 when either is
// spent. The stream gives them back with release.
func (h *Handler) admitStream(w http.ResponseWriter, r *http.Request, watchers int) (release func(), ok bool) {
	owner, err := h.streamOwner(r)
	if err != nil {
		h.writeError(w, r, err)
		return nil, false
	}
	key := clientKey(owner, r)
	if aerr := h.streamConns.acquire(key, 1); aerr != nil {
		h.refuse(w, r, aerr)
		return nil, false
	}
	if aerr := h.watchers.acquire(key, watchers); aerr != nil {
		h.streamConns.release(key, 1)
		h.refuse(w, r, aerr)
		return nil, false
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.streamConns.release(key, 1)
			h.watchers.release(key, watchers)
		})
	}, true
}

// spareConnKey marks the context of a connection accepted past the
// server's connection limit (OnSpareConnection).
type spareConnKey struct{}

// OnSpareConnection marks ctx, a connection's context (http.Server's
// ConnContext), as that of a connection the server accepted past its
// limit: its requests for anything but /health and /metrics answer 429,
// and it closes after each. A server whose connections are all taken
// then still answers its health checks and its monitoring.
func OnSpareConnection(ctx context.Context) context.Context {
	return context.WithValue(ctx, spareConnKey{}, true)
}

var errTooManyConnections = errorf(kv.CodeTooManyRequests,
	"the server has --max-connections connections open; past them it answers only /health and /metrics: retry later")
