package crash

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
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// crashRequest is one write a crash test sent: the events it makes, in
// order, and the revision the server acknowledged it at (0 if it was not
// acknowledged: it may or may not have happened, but never in part).
type crashRequest struct {
	events []string // "put <key>=<value>" or "del <key>"
	acked  int64
	seen   int64 // the revision the history shows it at, once found
}

// crashModel is what a crash test knows of the store: every request it
// sent and, read back from GET /v1/history and checked against them, the
// events of every revision up to top. Safe for concurrent use by writers;
// sync and the checks run while no writer does.
type crashModel struct {
	mu       sync.Mutex
	requests []*crashRequest
	byEvent  map[string][]*crashRequest // by the first event
	revs     map[int64][]string         // the events of each revision read back
	top      int64                      // revisions up to here are in revs

	// Set before writers start: crashWriter pads its values to at least
	// valueSize bytes, and takes the status stopOn as the end of its
	// writes rather than an error (the write it answers is not
	// acknowledged).
	valueSize int
	stopOn    int
}

func newCrashModel() *crashModel {
	return &crashModel{byEvent: make(map[string][]*crashRequest), revs: make(map[int64][]string), top: 1}
}

func (m *crashModel) add(events []string) *crashRequest {
	r := &crashRequest{events: events}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, r)
	m.byEvent[events[0]] = append(m.byEvent[events[0]], r)
	return r
}

func (m *crashModel) ack(r *crashRequest, rev int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r.acked = rev
}

func (m *crashModel) acked() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, r := range m.requests {
		if r.acked != 0 {
			n++
		}
	}
	return n
}

// historyByRevision reads every event of GET /v1/history from start to
// end (inclusive) and groups them by revision, as "put k=v" and "del k".
func historyByRevision(tb testing.TB, s *e2e.Server, start, end int64) map[int64][]string {
	tb.Helper()
	out := make(map[int64][]string)
	q := fmt.Sprintf("start_revision=%d&end_revision=%d&limit=10000", start, end)
	for page := q; ; {
		h := s.History(tb, page)
		for _, ev := range h.Events {
			out[ev.Kv.ModRevision] = append(out[ev.Kv.ModRevision], modelEvent(string(ev.Type), ev.Kv))
		}
		if !h.More {
			return out
		}
		page = q + "&page_token=" + url.QueryEscape(e2e.Deref(h.NextPageToken))
	}
}

func modelEvent(typ string, kv client.KeyValue) string {
	if typ == "delete" {
		return "del " + e2e.KeyOf(&kv)
	}
	return "put " + e2e.KeyOf(&kv) + "=" + e2e.ValueOf(&kv)
}

// sync reads the history after top up to the server's current revision
// and checks it: every revision holds events (the revisions have no gap),
// and they are exactly those of one request, acknowledged at that
// revision or not acknowledged at all; every request acknowledged in that
// span is found at its revision. A revision nothing explains (half a
// txn, a write never sent, one applied twice) fails the test.
func (m *crashModel) sync(tb testing.TB, s *e2e.Server) {
	tb.Helper()
	st := s.Status(tb)
	from := m.top + 1
	if st.CompactRevision > from {
		tb.Fatalf("the compact revision %d is past %d, the first revision the model has not read", st.CompactRevision, from)
	}
	if st.Revision < m.top {
		tb.Fatalf("the server is at revision %d, but revision %d was read back before", st.Revision, m.top)
	}
	got := make(map[int64][]string)
	if from <= st.Revision {
		got = historyByRevision(tb, s, from, st.Revision)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	failures := 0
	fail := func(format string, args ...any) {
		tb.Helper()
		tb.Errorf(format, args...)
		if failures++; failures >= 20 {
			tb.FailNow()
		}
	}
	for rev := from; rev <= st.Revision; rev++ {
		evs := got[rev]
		if len(evs) == 0 {
			fail("GET /v1/history: revision %d holds no event (current %d): the revisions have a gap", rev, st.Revision)
			continue
		}
		m.revs[rev] = evs
		var match *crashRequest
		for _, r := range m.byEvent[evs[0]] {
			if slices.Equal(r.events, evs) && (r.acked == rev || r.acked == 0 && r.seen == 0) {
				match = r
				break
			}
		}
		if match == nil {
			fail("revision %d holds %q: no request made exactly that (half applied, applied twice, or never sent)", rev, evs)
			continue
		}
		match.seen = rev
	}
	for _, r := range m.requests {
		if r.acked >= from && r.acked <= st.Revision && r.seen != r.acked {
			fail("%q was acknowledged at revision %d, which holds %q", r.events, r.acked, m.revs[r.acked])
		}
		if r.acked > st.Revision {
			fail("%q was acknowledged at revision %d, past the current revision %d", r.events, r.acked, st.Revision)
		}
	}
	m.top = st.Revision
}

// newestAt returns, for every key the model has seen, its newest event at
// or below rev and that event's revision.
func (m *crashModel) newestAt(rev int64) map[string]struct {
	event string
	rev   int64
} {
	out := make(map[string]struct {
		event string
		rev   int64
	})
	for r := int64(2); r <= min(rev, m.top); r++ {
		for _, ev := range m.revs[r] {
			key := strings.TrimPrefix(ev, "del ")
			if k, _, ok := strings.Cut(strings.TrimPrefix(ev, "put "), "="); ok && strings.HasPrefix(ev, "put ") {
				key = k
			}
			out[key] = struct {
				event string
				rev   int64
			}{ev, r}
		}
	}
	return out
}

// checkCompactedAt checks what a compaction at rev must keep: at rev,
// every key reads as its newest version at or below rev, and reads below
// rev answer 410.
func (m *crashModel) checkCompactedAt(tb testing.TB, s *e2e.Server, rev int64) {
	tb.Helper()
	m.checkReadsAt(tb, s, rev)
	if rev > 2 {
		s.Do(tb, "GET", fmt.Sprintf("/v1/kv?revision=%d", rev-1), nil).WantError(tb, http.StatusGone, "compacted")
	}
}

// checkReadsAt checks that at rev every key the model knows reads as its
// newest version at or below rev, or is absent if that is a delete.
func (m *crashModel) checkReadsAt(tb testing.TB, s *e2e.Server, rev int64) {
	tb.Helper()
	for key, last := range m.newestAt(rev) {
		path := fmt.Sprintf("%s?revision=%d", e2e.KeyPath(key), rev)
		r := s.Do(tb, "GET", path, nil)
		if strings.HasPrefix(last.event, "del ") {
			r.WantError(tb, http.StatusNotFound, "key_not_found")
			continue
		}
		var g client.GetResponse
		r.Ok(tb, http.StatusOK, &g)
		if got := modelEvent("put", g.Kv); got != last.event || g.Kv.ModRevision != last.rev {
			tb.Errorf("GET %s = %.200s, want %.200q of revision %d, its newest version at or below %d", path, e2e.KVString(&g.Kv), last.event, last.rev, rev)
		}
	}
}

// keptAt returns how many history records a finished compaction at rev
// leaves at each revision at or below it: one for each key's newest
// version, a put, or a delete made exactly at rev.
func (m *crashModel) keptAt(rev int64) map[int64]int {
	out := make(map[int64]int)
	for _, last := range m.newestAt(rev) {
		if strings.HasPrefix(last.event, "put ") || last.rev == rev {
			out[last.rev]++
		}
	}
	return out
}

// crashWriter writes keys of its own under prefix until its context ends
// or a write is not answered 200, recording every write in the model
// before sending it and its revision once acknowledged: puts of its ten
// keys, txns putting three of them, and deletes of one it knows exists.
// Values are unique, so every put event names its request. It returns
// the first unexpected answer (a status other than 200 while the server
// still answers), or nil.
func crashWriter(ctx context.Context, s *e2e.Server, m *crashModel, prefix string, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, seed))
	exists := make(map[string]bool)
	key := func(i int) string { return fmt.Sprintf("%s/k%d", prefix, i) }
	for i := 0; ctx.Err() == nil; i++ {
		value := func(k string) string {
			v := fmt.Sprintf("%s#%d.%x", k, i, rng.Uint32())
			return v + strings.Repeat(".", max(0, m.valueSize-len(v)))
		}
		var (
			events  []string
			method  = "PUT"
			path    string
			body    []byte
			written = map[string]bool{}
		)
		switch n := rng.IntN(10); {
		case n < 2:
			var present []string
			for k, ok := range exists {
				if ok {
					present = append(present, k)
				}
			}
			if len(present) == 0 {
				continue
			}
			slices.Sort(present)
			k := present[rng.IntN(len(present))]
			method, path, events = "DELETE", e2e.KeyPath(k), []string{"del " + k}
			written[k] = false
		case n < 4:
			first := rng.IntN(10)
			var ops []string
			for j := range 3 {
				k := key((first + j) % 10)
				v := value(k)
				ops = append(ops, fmt.Sprintf(`{"put":{"key":%s,"value":%s}}`, e2e.JSONString(k), e2e.JSONString(v)))
				events = append(events, "put "+k+"="+v)
				written[k] = true
			}
			method, path = "POST", "/v1/txn"
			body = []byte(`{"success":[` + strings.Join(ops, ",") + `]}`)
		default:
			k := key(rng.IntN(10))
			v := value(k)
			path, body, events = e2e.KeyPath(k), []byte(v), []string{"put " + k + "=" + v}
			written[k] = true
		}
		req := m.add(events)
		r, err := s.Send(ctx, method, path, body)
		if err != nil {
			return nil // the server is gone, or the context ended
		}
		var res client.HeaderResponse
		if m.stopOn != 0 && r.Status == m.stopOn {
			return nil
		}
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &res) != nil || res.Header.Revision == 0 {
			return fmt.Errorf("%s = %d %s, want 200", r.Req, r.Status, r.Body)
		}
		m.ack(req, res.Header.Revision)
		for k, v := range written {
			exists[k] = v
		}
	}
	return nil
}

// startCrashWriters runs n crashWriters under prefix/<i> until ctx ends and
// reports the first unexpected answer.
func startCrashWriters(ctx context.Context, tb testing.TB, s *e2e.Server, m *crashModel, prefix string, n int, rng *rand.Rand) (wait func()) {
	var wg sync.WaitGroup
	for i := range n {
		seed := rng.Uint64()
		wg.Go(func() {
			if err := crashWriter(ctx, s, m, fmt.Sprintf("%s/%d", prefix, i), seed); err != nil {
				tb.Error(err)
			}
		})
	}
	return wg.Wait
}
