//go:build unix

package tests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/httpkv/httpkv/internal/ssetest"
	"github.com/httpkv/httpkv/tests/e2e"
)

// soakKind is how a soak watcher reads.
type soakKind int

const (
	soakSteady      soakKind = iota // reads all the time
	soakReconnect                   // reads, and reconnects with Last-Event-ID every 5 to 20 s
	soakStalled                     // reads 5 to 15 s, then stops reading 10 to 90 s, and again
	soakKindsNumber                 // how many kinds there are
)

func (k soakKind) String() string {
	return [...]string{"steady", "reconnecting", "stalled"}[k]
}

// soakWatcher is one watch of the soak. It records the events of every
// data message it reads, by revision, and its position: lastID, the
// newest id read (of a data message, a progress bookmark or the created
// message), through which the stream says every event of the range was
// sent. verify compares what it read with the history.
type soakWatcher struct {
	kind   soakKind
	query  string // the range selector
	match  func(key string) bool
	client *http.Client
	errs   *soakErrors
	truth  *soakTruth // for when revisions were acknowledged
	lags   *soakLags
	rng    *rand.Rand // used by run alone

	mu       sync.Mutex
	started  bool // the first created message was read
	lastID   int64
	verified int64                 // compared with the history up to here
	received map[int64][]soakEvent // read and not yet compared, by revision
	// gaps are the revisions skipped by starting again from now after
	// compacted: the watcher claims nothing of them.
	gaps [][2]int64
	// What happened, for the report.
	events, reconnects, compacted, cut, stalls int

	// unstall, once true, makes a stalled watcher read on for good.
	unstall atomic.Bool
}

// run reads the watch until ctx ends, reconnecting as its kind says.
func (w *soakWatcher) run(ctx context.Context, url string) {
	resume := false // the next connection resumes after lastID
	nextStall := time.Now().Add(time.Duration(5+w.rng.IntN(10)) * time.Second)
	for ctx.Err() == nil {
		end := w.stream(ctx, url, resume, &nextStall)
		if ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		switch end {
		case "compacted":
			w.compacted++
			resume = false // start again from now
		case "cut":
			w.cut++
			resume = true
		case "reconnect":
			w.reconnects++
			resume = true
		default: // an error, already reported
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
	}
}

// stream runs one connection of the watch and says how it ended:
// "compacted", "cut" (the server closed it while a stalled watcher did
// not read), "reconnect" (time for a reconnecting watcher to go), or ""
// after reporting an error.
func (w *soakWatcher) stream(ctx context.Context, base string, resume bool, nextStall *time.Time) string {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/watch?"+w.query+"&progress_notify=true", nil)
	if err != nil {
		w.errs.add("%v", err)
		return ""
	}
	w.mu.Lock()
	from := w.lastID
	w.mu.Unlock()
	if resume {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(from, 10))
	}
	resp, err := w.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			w.errs.add("GET /v1/watch?%s: %v", w.query, err)
		}
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		w.errs.add("GET /v1/watch?%s = %d %s", w.query, resp.StatusCode, b)
		return ""
	}
	reconnectAt := time.Now().Add(time.Duration(5+w.rng.IntN(15)) * time.Second)
	stalled := false // this connection went unread for a while
	p := newSSEParser(resp.Body)
	for {
		m, err := p.Next()
		if ctx.Err() != nil {
			return ""
		}
		if err != nil {
			// The server gives up on a client that does not read: the
			// stream ends, perhaps inside a message.
			if stalled && (!errors.Is(err, ssetest.ErrSyntax) || strings.Contains(err.Error(), "ended inside")) {
				return "cut"
			}
			w.errs.add("GET /v1/watch?%s (%v): the stream ended: %v", w.query, w.kind, err)
			return ""
		}
		switch end := w.handle(m, resume); end {
		case "":
		case "compacted":
			if w.kind != soakStalled {
				w.errs.add("GET /v1/watch?%s (%v, last id %d): compacted, but it read all the time", w.query, w.kind, w.lastIDNow())
				return ""
			}
			return end
		default:
			return ""
		}
		now := time.Now()
		switch {
		case w.kind == soakReconnect && now.After(reconnectAt):
			return "reconnect"
		case w.kind == soakStalled && now.After(*nextStall) && !w.unstall.Load():
			w.mu.Lock()
			w.stalls++
			w.mu.Unlock()
			stalled = true
			pause := time.Duration(10+w.rng.IntN(80)) * time.Second
			t := time.NewTimer(pause)
			for done := false; !done; {
				select {
				case <-ctx.Done():
					t.Stop()
					return ""
				case <-t.C:
					done = true
				case <-time.After(100 * time.Millisecond):
					done = w.unstall.Load()
				}
			}
			t.Stop()
			*nextStall = time.Now().Add(time.Duration(5+w.rng.IntN(10)) * time.Second)
		}
	}
}

func (w *soakWatcher) lastIDNow() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastID
}

// handle checks and records one block of the stream. It returns "" to
// read on, "compacted" at the compacted message, and "error" after
// reporting one.
func (w *soakWatcher) handle(m sseMessage, resume bool) string {
	if m.HasRetry && !m.HasData {
		return ""
	}
	p, err := e2e.DecodeWatchPayload([]byte(m.Data), false)
	if err != nil {
		w.errs.add("GET /v1/watch?%s: %v: %v", w.query, m, err)
		return "error"
	}
	var id int64
	if m.HasID {
		id, _ = strconv.ParseInt(m.ID, 10, 64)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	fail := func(format string, args ...any) string {
		w.errs.add("GET /v1/watch?%s (%v, last id %d): %s", w.query, w.kind, w.lastID, fmt.Sprintf(format, args...))
		return "error"
	}
	switch m.Event {
	case "created":
		if resume {
			if p.StartRevision != w.lastID+1 {
				return fail("resumed with Last-Event-ID %d at start_revision %d", w.lastID, p.StartRevision)
			}
			return ""
		}
		// A new start: the revisions between the last one read and the
		// start are not claimed.
		if !w.started {
			w.started, w.verified = true, p.StartRevision-1
		} else if p.StartRevision-1 > w.lastID {
			w.gaps = append(w.gaps, [2]int64{w.lastID + 1, p.StartRevision - 1})
		}
		w.lastID = max(w.lastID, p.StartRevision-1)
	case "progress":
		if id < w.lastID {
			return fail("progress %d goes back", id)
		}
		w.lastID = id
	case "":
		if id <= w.lastID {
			return fail("message %d again or out of order: a duplicate", id)
		}
		var evs []soakEvent
		for _, ev := range p.Events {
			if ev.Kv.ModRevision != id || !w.match(e2e.KeyOf(&ev.Kv)) {
				return fail("event %v in the message of revision %d", ev, id)
			}
			evs = append(evs, newSoakEvent(string(ev.Type), ev.Kv))
		}
		w.received[id] = evs
		w.lastID = id
		w.events += len(evs)
		if at, ok := w.truth.ackedAt.Load(id); ok {
			w.lags.add(w.kind, time.Since(at.(time.Time)))
		}
	case "compacted":
		return "compacted"
	default:
		return fail("%v", m)
	}
	return ""
}

// verify compares what the watcher read, up to the newest revision both
// it and the truth have, with the truth's events of its range, and
// forgets them. It returns how far it has compared.
func (w *soakWatcher) verify(tr *soakTruth) int64 {
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	upto := min(w.lastID, tr.top)
	if w.verified < tr.base && w.verified < upto {
		w.errs.add("watch %s: revision %d to compare was dropped from the truth (base %d)", w.query, w.verified+1, tr.base)
		w.verified = upto
	}
	for rev := w.verified + 1; rev <= upto; rev++ {
		if len(w.gaps) > 0 && rev >= w.gaps[0][0] {
			if w.gaps[0][1] > upto {
				break // the rest of the gap next time
			}
			rev = w.gaps[0][1]
			w.gaps = w.gaps[1:]
			continue
		}
		var want []soakEvent
		for _, ev := range tr.revs[rev] {
			if w.match(ev.key) {
				want = append(want, ev)
			}
		}
		got := w.received[rev]
		if !slices.Equal(got, want) {
			w.errs.add("watch %s (%v): revision %d: read %v, the history has %v", w.query, w.kind, rev, got, want)
		}
		delete(w.received, rev)
	}
	w.verified = max(w.verified, upto)
	return w.verified
}

// newSoakWatcher makes watcher i of n: a range of one key, one bucket, or
// every small key, and a kind.
func newSoakWatcher(i int, kind soakKind, clients [soakKindsNumber]*http.Client, errs *soakErrors, tr *soakTruth, lags *soakLags, seed uint64) *soakWatcher {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	w := &soakWatcher{kind: kind, client: clients[kind], errs: errs, truth: tr, lags: lags, rng: rng, received: make(map[int64][]soakEvent)}
	switch n := rng.IntN(100); {
	case kind == soakStalled:
		w.query = "key=" + url.QueryEscape(soakBulk) + "&prefix=true"
		w.match = func(k string) bool { return strings.HasPrefix(k, soakBulk) }
	case n < 2:
		w.query = "key=" + url.QueryEscape(soakKeyPrefix) + "&prefix=true"
		w.match = func(k string) bool { return strings.HasPrefix(k, soakKeyPrefix) }
	case n < 50:
		prefix := soakKey(rng.IntN(soakBuckets), 0)[:len(soakKeyPrefix)+3]
		w.query = "key=" + url.QueryEscape(prefix) + "&prefix=true"
		w.match = func(k string) bool { return strings.HasPrefix(k, prefix) }
	default:
		key := soakKey(rng.IntN(soakBuckets), rng.IntN(soakKeys))
		w.query = "key=" + url.QueryEscape(key)
		w.match = func(k string) bool { return k == key }
	}
	return w
}

// soakClients returns the HTTP clients of the watchers: the stalled ones
// take a small receive buffer, so that the server's sends block soon
// after they stop reading instead of filling a large socket buffer.
func soakClients() [soakKindsNumber]*http.Client {
	normal := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: -1}}
	small := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	stalled := &http.Client{Transport: &http.Transport{DialContext: small.DialContext, MaxIdleConnsPerHost: -1}}
	return [soakKindsNumber]*http.Client{normal, normal, stalled}
}

// soakLags keeps how late watchers read the revisions the load wrote,
// from the write's acknowledgment to the watcher's reading, by kind: one
// in every soakLagEvery, so that memory stays small however long the
// soak runs.
type soakLags struct {
	mu   sync.Mutex
	seen [soakKindsNumber]int
	lags [soakKindsNumber][]time.Duration
}

const soakLagEvery = 16

func (l *soakLags) add(k soakKind, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[k]++; l.seen[k]%soakLagEvery == 0 {
		l.lags[k] = append(l.lags[k], d)
	}
}

// quantiles returns the median, the 99th percentile and the most of a
// kind's lags.
func (l *soakLags) quantiles(k soakKind) (p50, p99, most time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := slices.Clone(l.lags[k])
	if len(s) == 0 {
		return 0, 0, 0
	}
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*99/100], s[len(s)-1]
}
