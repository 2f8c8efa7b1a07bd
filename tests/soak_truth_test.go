//go:build unix

package tests

import (
	"fmt"
	"hash/fnv"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// soakEvent is an event as the soak compares it: the value by its hash.
type soakEvent struct {
	key  string
	del  bool
	hash uint64
}

func newSoakEvent(typ string, kv client.KeyValue) soakEvent {
	if typ == "delete" {
		return soakEvent{key: e2e.KeyOf(&kv), del: true}
	}
	h := fnv.New64a()
	h.Write([]byte(e2e.ValueOf(&kv)))
	return soakEvent{key: e2e.KeyOf(&kv), hash: h.Sum64()}
}

func valueHash(v string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(v))
	return h.Sum64()
}

func (e soakEvent) String() string {
	if e.del {
		return "del " + e.key
	}
	return fmt.Sprintf("put %s=#%x", e.key, e.hash)
}

// soakErrors collects what went wrong from every goroutine of the soak:
// it counts all, and keeps the first few to report.
type soakErrors struct {
	mu    sync.Mutex
	n     int
	first []string
}

func (e *soakErrors) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if len(e.first) < 30 {
		e.first = append(e.first, fmt.Sprintf(format, args...))
	}
}

func (e *soakErrors) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

// soakTruth is the store's history read back from GET /v1/history: the
// events of every revision from base+1 to top, without a gap, checked
// against the writes the load had acknowledged.
type soakTruth struct {
	mu   sync.RWMutex
	base int64 // revisions at or below it are dropped (trim)
	top  int64
	revs map[int64][]soakEvent

	ackMu sync.Mutex
	acks  map[int64]soakAck // acknowledged writes not yet checked, by revision

	// ackedAt is when each revision the load wrote was acknowledged, for
	// the watchers to measure how late they read it.
	ackedAt sync.Map // int64 -> time.Time
}

// soakAck is what an acknowledged write made: events, and then the
// delete of maybeDel if that key existed.
type soakAck struct {
	events   []soakEvent
	maybeDel string
}

func (a soakAck) matches(got []soakEvent) bool {
	return slices.Equal(got, a.events) ||
		a.maybeDel != "" && slices.Equal(got, append(slices.Clip(a.events), soakEvent{key: a.maybeDel, del: true}))
}

func newSoakTruth(rev int64) *soakTruth {
	return &soakTruth{base: rev, top: rev, revs: make(map[int64][]soakEvent), acks: make(map[int64]soakAck)}
}

// ack records a write acknowledged at rev.
func (tr *soakTruth) ack(errs *soakErrors, rev int64, a soakAck) {
	tr.ackMu.Lock()
	defer tr.ackMu.Unlock()
	if _, dup := tr.acks[rev]; dup {
		errs.add("two writes acknowledged at revision %d", rev)
	}
	tr.acks[rev] = a
	tr.ackedAt.Store(rev, time.Now())
}

// extend reads the history from top+1 to rev and checks it: every
// revision holds events, and one the load had acknowledged holds exactly
// what it wrote.
func (tr *soakTruth) extend(tb testing.TB, s *e2e.Server, errs *soakErrors, rev int64) {
	tb.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if rev <= tr.top {
		return
	}
	q := fmt.Sprintf("start_revision=%d&end_revision=%d&limit=10000", tr.top+1, rev)
	for page := q; ; {
		h := s.History(tb, page)
		for _, ev := range h.Events {
			tr.revs[ev.Kv.ModRevision] = append(tr.revs[ev.Kv.ModRevision], newSoakEvent(string(ev.Type), ev.Kv))
		}
		if !h.More {
			break
		}
		page = q + "&page_token=" + url.QueryEscape(e2e.Deref(h.NextPageToken))
	}
	for r := tr.top + 1; r <= rev; r++ {
		if len(tr.revs[r]) == 0 {
			errs.add("GET /v1/history: revision %d holds no event: the revisions have a gap", r)
		}
	}
	tr.top = rev
	tr.ackMu.Lock()
	defer tr.ackMu.Unlock()
	for r, want := range tr.acks {
		if r > tr.top {
			continue
		}
		if got := tr.revs[r]; !want.matches(got) {
			errs.add("revision %d holds %v, want %v as acknowledged", r, got, want)
		}
		delete(tr.acks, r)
	}
}

// trim drops the revisions at or below rev.
func (tr *soakTruth) trim(rev int64) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for r := tr.base + 1; r <= min(rev, tr.top); r++ {
		delete(tr.revs, r)
		tr.ackedAt.Delete(r)
	}
	tr.base = max(tr.base, min(rev, tr.top))
}
