//go:build unix

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// The keys of the soak: soakBuckets prefixes of soakKeys keys each, which
// the load writes small values to and most watchers watch, and
// soakBulkKeys keys of soakBulkSize values, which the stalled watchers
// watch, so that a watcher that stops reading falls behind quickly.
const (
	soakBuckets   = 50
	soakKeys      = 40
	soakBulkKeys  = 20
	soakBulkSize  = 16 << 10
	soakLeaseTTL  = 5 // seconds
	soakKeyPrefix = "soak/k/"
	soakBulk      = "soak/bulk/"
)

func soakKey(bucket, i int) string { return fmt.Sprintf("%s%02d/%02d", soakKeyPrefix, bucket, i) }

// soakLoad is the write load of the soak: puts, txns, deletes, range
// deletes, large puts and leases, at about rate operations a second from
// writers goroutines. Every answer must be the expected one.
type soakLoad struct {
	s      *e2e.Server
	truth  *soakTruth
	errs   *soakErrors
	rate   float64
	leases chan soakLeaseJob

	mu  sync.Mutex
	ops map[string]int // operations done, by name, for the report
}

// soakLeaseJob is what the lease goroutine does with a granted lease:
// keep it alive at the times in keep, then revoke it at revoke (zero:
// let it expire).
type soakLeaseJob struct {
	id     int64
	keep   []time.Time
	revoke time.Time
}

func (l *soakLoad) count(op string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ops == nil {
		l.ops = make(map[string]int)
	}
	l.ops[op]++
}

// run writes until ctx ends, from writers goroutines and one that keeps
// leases alive and revokes them.
func (l *soakLoad) run(ctx context.Context, writers int, seed uint64) (wait func()) {
	var wg sync.WaitGroup
	l.leases = make(chan soakLeaseJob, 1024)
	wg.Go(func() { l.leaseLoop(ctx) })
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			tick := time.NewTicker(time.Duration(float64(writers) / l.rate * float64(time.Second)))
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				l.op(ctx, rng)
			}
		})
	}
	return wg.Wait
}

// send sends a request and checks its status; it returns nil if the
// context ended first.
func (l *soakLoad) send(ctx context.Context, want int, method, path string, body []byte) *e2e.Reply {
	r, err := l.s.Send(ctx, method, path, body)
	if err != nil {
		if ctx.Err() == nil {
			l.errs.add("%s %s: %v", method, path, err)
		}
		return nil
	}
	if r.Status != want {
		l.errs.add("%s = %d %s, want %d", r.Req, r.Status, r.Body, want)
		return nil
	}
	return r
}

// op sends one operation chosen at random.
func (l *soakLoad) op(ctx context.Context, rng *rand.Rand) {
	value := func() string {
		return fmt.Sprintf("%x.%s", rng.Uint64(), strings.Repeat("v", 100+rng.IntN(500)))
	}
	randKey := func() string { return soakKey(rng.IntN(soakBuckets), rng.IntN(soakKeys)) }
	var res client.DeleteResponse
	decode := func(r *e2e.Reply) bool {
		if r == nil {
			return false
		}
		if err := json.Unmarshal(r.Body, &res); err != nil {
			l.errs.add("%s: %v", r.Req, err)
			return false
		}
		return true
	}
	switch n := rng.IntN(100); {
	case n < 45:
		k, v := randKey(), value()
		if decode(l.send(ctx, http.StatusOK, "PUT", e2e.KeyPath(k), []byte(v))) {
			l.truth.ack(l.errs, res.Header.Revision, soakAck{events: []soakEvent{{key: k, hash: valueHash(v)}}})
			l.count("put")
		}
	case n < 60:
		// Two or three puts and a delete of distinct keys of one bucket
		// or of several: watchers of each must get them at once.
		bucket := rng.IntN(soakBuckets)
		perm := rng.Perm(soakKeys)
		var ops []string
		var events []soakEvent
		for j := range 2 + rng.IntN(2) {
			b := bucket
			if rng.IntN(2) == 0 {
				b = rng.IntN(soakBuckets)
			}
			k, v := soakKey(b, perm[j]), value()
			if slices.ContainsFunc(events, func(e soakEvent) bool { return e.key == k }) {
				continue
			}
			ops = append(ops, fmt.Sprintf(`{"put":{"key":%s,"value":%s}}`, e2e.JSONString(k), e2e.JSONString(v)))
			events = append(events, soakEvent{key: k, hash: valueHash(v)})
		}
		del := soakKey(bucket, perm[3])
		ops = append(ops, fmt.Sprintf(`{"delete":{"key":%s}}`, e2e.JSONString(del)))
		if decode(l.send(ctx, http.StatusOK, "POST", "/v1/txn", []byte(`{"success":[`+strings.Join(ops, ",")+`]}`))) {
			l.truth.ack(l.errs, res.Header.Revision, soakAck{events: events, maybeDel: del})
			l.count("txn")
		}
	case n < 70:
		if decode(l.send(ctx, http.StatusOK, "DELETE", e2e.KeyPath(randKey()), nil)) {
			l.count("delete")
		}
	case n < 72:
		b, from := rng.IntN(soakBuckets), rng.IntN(soakKeys-5)
		path := fmt.Sprintf("/v1/kv?key=%s&range_end=%s", url.QueryEscape(soakKey(b, from)), url.QueryEscape(soakKey(b, from+5)))
		if decode(l.send(ctx, http.StatusOK, "DELETE", path, nil)) {
			l.count("range delete")
		}
	case n < 82:
		k := fmt.Sprintf("%s%02d", soakBulk, rng.IntN(soakBulkKeys))
		v := fmt.Sprintf("%x.%s", rng.Uint64(), strings.Repeat("b", soakBulkSize))
		if decode(l.send(ctx, http.StatusOK, "PUT", e2e.KeyPath(k), []byte(v))) {
			l.truth.ack(l.errs, res.Header.Revision, soakAck{events: []soakEvent{{key: k, hash: valueHash(v)}}})
			l.count("bulk put")
		}
	case n < 87:
		l.grant(ctx, rng, randKey)
	case n < 90:
		doc := fmt.Sprintf(`{"success":[{"range":{"key":%s,"prefix":true,"count_only":true}},{"range":{"key":%s}}]}`,
			e2e.JSONString(soakKeyPrefix), e2e.JSONString(randKey()))
		if l.send(ctx, http.StatusOK, "POST", "/v1/txn", []byte(doc)) != nil {
			l.count("read txn")
		}
	default:
		b := rng.IntN(soakBuckets)
		if l.send(ctx, http.StatusOK, "GET", "/v1/kv?key="+url.QueryEscape(soakKey(b, 0)[:len(soakKeyPrefix)+3])+"&prefix=true", nil) != nil {
			l.count("list")
		}
	}
}

// grant grants a lease, puts two keys with it, and hands it to the lease
// goroutine: a third are left to expire, a third revoked at once, a
// third kept alive twice and then revoked.
func (l *soakLoad) grant(ctx context.Context, rng *rand.Rand, randKey func() string) {
	r := l.send(ctx, http.StatusCreated, "POST", "/v1/leases", []byte(fmt.Sprintf(`{"ttl":%d}`, soakLeaseTTL)))
	if r == nil {
		return
	}
	var g client.LeaseResponse
	if err := json.Unmarshal(r.Body, &g); err != nil || g.Id == 0 {
		l.errs.add("%s = %s: no id", r.Req, r.Body)
		return
	}
	granted := time.Now()
	k1, k2 := randKey(), randKey()
	if k1 == k2 {
		k2 = soakKey(soakBuckets-1, soakKeys-1)
		if k1 == k2 {
			k2 = soakKey(0, 0)
		}
	}
	doc := fmt.Sprintf(`{"success":[{"put":{"key":%s,"value":"leased","lease":%d}},{"put":{"key":%s,"value":"leased","lease":%d}}]}`,
		e2e.JSONString(k1), g.Id, e2e.JSONString(k2), g.Id)
	if l.send(ctx, http.StatusOK, "POST", "/v1/txn", []byte(doc)) == nil {
		return
	}
	l.count("lease")
	job := soakLeaseJob{id: g.Id}
	switch rng.IntN(3) {
	case 0: // expires
	case 1:
		job.revoke = granted.Add(500 * time.Millisecond)
	case 2:
		job.keep = []time.Time{granted.Add(1500 * time.Millisecond), granted.Add(3 * time.Second)}
		job.revoke = granted.Add(4 * time.Second)
	}
	if job.revoke.IsZero() {
		return
	}
	select {
	case l.leases <- job:
	case <-ctx.Done():
	}
}

// leaseLoop keeps leases alive and revokes them when their jobs say.
// A keep-alive or revoke running late past the TTL may find the lease
// expired: that answers 404 and is no error.
func (l *soakLoad) leaseLoop(ctx context.Context) {
	var jobs []soakLeaseJob
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-l.leases:
			jobs = append(jobs, j)
			continue
		case <-tick.C:
		}
		now := time.Now()
		kept := jobs[:0]
		for _, j := range jobs {
			switch {
			case len(j.keep) > 0 && now.After(j.keep[0]):
				l.leaseCall(ctx, "POST", fmt.Sprintf("/v1/leases/%d/keepalive", j.id))
				j.keep = j.keep[1:]
				kept = append(kept, j)
			case len(j.keep) == 0 && now.After(j.revoke):
				l.leaseCall(ctx, "DELETE", fmt.Sprintf("/v1/leases/%d", j.id))
				l.count("revoke")
			default:
				kept = append(kept, j)
			}
		}
		jobs = kept
	}
}

func (l *soakLoad) leaseCall(ctx context.Context, method, path string) {
	r, err := l.s.Send(ctx, method, path, nil)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			l.errs.add("%s %s: %v", method, path, err)
		}
	case r.Status == http.StatusNotFound:
		l.count("late lease call")
	case r.Status != http.StatusOK:
		l.errs.add("%s = %d %s, want 200", r.Req, r.Status, r.Body)
	}
}
