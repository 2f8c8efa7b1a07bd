package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// streamLedger follows each watcher of a stream across its messages,
// connections and resumes, and fails the test on a message that breaks
// the per-watcher guarantees: created first and once, then events in
// increasing revisions (no duplicate, nothing out of order), progress
// never behind them, and nothing after the watcher's final message.
type streamLedger struct {
	tb testing.TB
	ws map[int64]*ledgerWatcher
}

type ledgerWatcher struct {
	start   int64
	created bool
	events  []string // as HistoryStrings gives them
	lastRev int64    // the newest revision of its events and bookmarks
	final   string   // "compacted" or "canceled: <reason>" once ended
}

func newStreamLedger(tb testing.TB) *streamLedger {
	return &streamLedger{tb: tb, ws: map[int64]*ledgerWatcher{}}
}

func (l *streamLedger) watcher(id int64) *ledgerWatcher {
	w := l.ws[id]
	if w == nil {
		w = &ledgerWatcher{}
		l.ws[id] = w
	}
	return w
}

// apply records one message.
func (l *streamLedger) apply(m streamMessage) {
	l.tb.Helper()
	w := l.watcher(m.WatchID)
	fail := func(format string, args ...any) {
		l.tb.Helper()
		l.tb.Fatalf("watch %d: %v: %s", m.WatchID, m, fmt.Sprintf(format, args...))
	}
	if w.final != "" {
		fail("a message after its final one (%s)", w.final)
	}
	if !w.created && m.Kind != "created" {
		fail("a message before created")
	}
	switch m.Kind {
	case "created":
		if w.created {
			fail("created twice")
		}
		w.created, w.start, w.lastRev = true, m.StartRevision, m.StartRevision-1
	case "events":
		if m.Header.Revision <= w.lastRev || m.Header.Revision < w.start {
			fail("revision %d after %d (start %d): out of order or a duplicate", m.Header.Revision, w.lastRev, w.start)
		}
		w.lastRev = m.Header.Revision
		for _, ev := range m.Events {
			h := client.WatchEvent{Type: ev.Type, Kv: ev.Kv, PrevKv: ev.PrevKv}
			w.events = append(w.events, e2e.HistoryString(&h))
		}
	case "progress":
		if m.Header.Revision < w.lastRev {
			fail("bookmark %d behind revision %d", m.Header.Revision, w.lastRev)
		}
		w.lastRev = m.Header.Revision
	case "compacted":
		w.final = "compacted"
	case "canceled":
		w.final = "canceled: " + m.Reason
	}
}

// applyAll records messages, those with an id up to upTo only (all when
// upTo is 0).
func (l *streamLedger) applyAll(ms []streamMessage, upTo int64) {
	l.tb.Helper()
	for _, m := range ms {
		if upTo == 0 || m.ID <= upTo {
			l.apply(m)
		}
	}
}

// readUntil reads r into the ledger until done says so, and returns what
// it read. It fails once timeout passes without a message that moves a
// watcher on (an event, or a revision a watcher had not reached): a
// stream that stopped, not one slowed by a busy machine.
func (l *streamLedger) readUntil(r *streamReader, timeout time.Duration, done func() bool) []streamMessage {
	l.tb.Helper()
	var got []streamMessage
	deadline := time.Now().Add(timeout)
	for !done() {
		left := time.Until(deadline)
		if left <= 0 {
			l.tb.Fatalf("%s: nothing new for %v, and not done; the ledger:\n%s", r.Req, timeout, l)
		}
		before := l.reached()
		m := r.next(left)
		l.apply(m)
		got = append(got, m)
		if l.reached() > before {
			deadline = time.Now().Add(timeout)
		}
	}
	return got
}

// reached sums what the watchers have got: their events and revisions.
func (l *streamLedger) reached() int64 {
	var n int64
	for _, w := range l.ws {
		n += int64(len(w.events)) + w.lastRev
	}
	return n
}

// has reports whether each watcher in want has at least that many events.
func (l *streamLedger) has(want map[int64][]string) func() bool {
	return func() bool {
		for id, evs := range want {
			if w := l.ws[id]; w == nil || len(w.events) < len(evs) {
				return false
			}
		}
		return true
	}
}

// ended reports whether every watcher of ids has ended.
func (l *streamLedger) ended(ids ...int64) func() bool {
	return func() bool {
		for _, id := range ids {
			if w := l.ws[id]; w == nil || w.final == "" {
				return false
			}
		}
		return true
	}
}

// wantEvents fails unless each watcher of want received exactly its
// events.
func (l *streamLedger) wantEvents(want map[int64][]string) {
	l.tb.Helper()
	for id, evs := range want {
		w := l.watcher(id)
		if !slices.Equal(w.events, evs) {
			l.tb.Errorf("watch %d (from %d) received %d events, want %d:\n got %q\nwant %q", id, w.start, len(w.events), len(evs), w.events, evs)
		}
	}
}

func (l *streamLedger) String() string {
	var b strings.Builder
	ids := make([]int64, 0, len(l.ws))
	for id := range l.ws {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		w := l.ws[id]
		fmt.Fprintf(&b, "  watch %d: start %d, %d events, last %d, final %q\n", id, w.start, len(w.events), w.lastRev, w.final)
	}
	return b.String()
}
