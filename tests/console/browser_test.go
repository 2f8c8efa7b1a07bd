package console

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// watchPage is the page the browser runs. It watches the prefix "k" of
// the httpkv server at {{HTTPKV}} with an EventSource and reports, in
// order, everything the EventSource does to its own origin's /report. The
// reports are chained so they arrive in the order they were made.
const watchPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>httpkv watch</title></head>
<body><script>
"use strict";
let seq = 0;
let chain = Promise.resolve();
function report(kind, fields) {
	const body = JSON.stringify(Object.assign({seq: seq++, kind: kind}, fields));
	chain = chain.then(() => fetch("/report", {method: "POST", body: body})).catch(() => {});
}
const es = new EventSource({{HTTPKV}} + "/v1/watch?key=k&prefix=true");
es.onopen = () => report("open", {});
es.onerror = () => report("error", {state: es.readyState});
es.onmessage = (e) => report("message", {data: e.data, id: e.lastEventId});
for (const name of ["created", "canceled", "compacted", "progress"]) {
	es.addEventListener(name, (e) => report(name, {data: e.data, id: e.lastEventId}));
}
</script></body></html>
`

// pageReport is one thing the page's EventSource did.
type pageReport struct {
	Seq   int    `json:"seq"`
	Kind  string `json:"kind"` // open, error, message, or an event name
	Data  string `json:"data"`
	ID    string `json:"id"`
	State int    `json:"state"` // readyState, for errors
}

func (r pageReport) String() string {
	switch r.Kind {
	case "open":
		return "open"
	case "error":
		return fmt.Sprintf("error(readyState %d)", r.State)
	}
	return fmt.Sprintf("%s id=%q %s", r.Kind, r.ID, r.Data)
}

// pageServer serves watchPage from an origin of its own and collects the
// page's reports.
type pageServer struct {
	*httptest.Server
	mu      sync.Mutex // guards the fields below
	httpkv  string     // the URL the page watches
	reports []pageReport
	bad     []string // reports that were not understood or out of order
}

func startPageServer(tb testing.TB) *pageServer {
	tb.Helper()
	p := &pageServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		url := p.httpkv
		p.mu.Unlock()
		quoted, _ := json.Marshal(url)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, strings.ReplaceAll(watchPage, "{{HTTPKV}}", string(quoted)))
	})
	mux.HandleFunc("POST /report", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var rep pageReport
		if err == nil {
			err = json.Unmarshal(body, &rep)
		}
		p.mu.Lock()
		switch {
		case err != nil:
			p.bad = append(p.bad, fmt.Sprintf("report %q: %v", body, err))
		case rep.Seq != len(p.reports):
			p.bad = append(p.bad, fmt.Sprintf("report %d arrived after %d reports", rep.Seq, len(p.reports)))
		default:
			p.reports = append(p.reports, rep)
		}
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	p.Server = httptest.NewServer(mux)
	tb.Cleanup(p.Close)
	return p
}

func (p *pageServer) setHTTPKV(url string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.httpkv = url
}

// snapshot returns the reports so far, and the reports that were refused.
func (p *pageServer) snapshot() ([]pageReport, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reports), slices.Clone(p.bad)
}

// pageMessage is a data message the page received, decoded.
type pageMessage struct {
	id     int64
	header client.ResponseHeader
	events []client.WatchEvent
}

// pageState sorts the page's reports: the data messages in order, and the
// created events.
type pageState struct {
	messages []pageMessage
	created  []int64 // start_revision of each created event
	log      []string
}

func readPage(tb testing.TB, p *pageServer) pageState {
	tb.Helper()
	reports, bad := p.snapshot()
	if len(bad) > 0 {
		tb.Fatalf("the page sent reports the test cannot use: %q", bad)
	}
	var st pageState
	for _, r := range reports {
		st.log = append(st.log, r.String())
		switch r.Kind {
		case "message":
			var d client.WatchEvents
			if err := json.Unmarshal([]byte(r.Data), &d); err != nil {
				tb.Fatalf("page got message %s: data is not JSON: %v", r, err)
			}
			id, err := strconv.ParseInt(r.ID, 10, 64)
			if err != nil {
				tb.Fatalf("page got message %s: lastEventId is not a revision", r)
			}
			st.messages = append(st.messages, pageMessage{id: id, header: d.Header, events: d.Events})
		case "created":
			var d client.WatchCreated
			if err := json.Unmarshal([]byte(r.Data), &d); err != nil {
				tb.Fatalf("page got created %s: %v", r, err)
			}
			st.created = append(st.created, d.StartRevision)
		case "compacted":
			tb.Fatalf("page got %s: nothing was compacted", r)
		}
	}
	return st
}

// browserPut is a write the test made: the keys it put, at one revision.
type browserPut struct {
	rev  int64
	keys []string
}

// checkPageMessages checks the page's data messages against the writes,
// so far as the page got: one message per write, in order, with its
// revision as id and exactly its keys, no duplicates and no gaps. It
// reports whether the page has every write.
func checkPageMessages(tb testing.TB, st pageState, puts []browserPut) bool {
	tb.Helper()
	if len(st.messages) > len(puts) {
		tb.Fatalf("page got %d messages for %d writes:\n%s", len(st.messages), len(puts), strings.Join(st.log, "\n"))
	}
	for i, m := range st.messages {
		want := puts[i]
		var keys []string
		for _, ev := range m.events {
			if ev.Type != "put" || ev.Kv.ModRevision != want.rev {
				tb.Fatalf("page message %d holds %s, want puts at revision %d:\n%s", i, e2e.EventString(&ev), want.rev, strings.Join(st.log, "\n"))
			}
			keys = append(keys, e2e.KeyOf(&ev.Kv))
		}
		if m.id != want.rev || m.header.Revision != want.rev || !slices.Equal(keys, want.keys) {
			tb.Fatalf("page message %d: id %d, revision %d, keys %q; want id and revision %d, keys %q:\n%s",
				i, m.id, m.header.Revision, keys, want.rev, want.keys, strings.Join(st.log, "\n"))
		}
	}
	return len(st.messages) == len(puts)
}

// TestBrowserEventSourceResume runs a page in headless Chromium, from an
// origin other than httpkv's, that watches with EventSource; it restarts
// httpkv under it and checks that the browser reconnects by itself (retry
// and Last-Event-ID) and gets every write exactly once, in order.
func TestBrowserEventSourceResume(t *testing.T) {
	page := startPageServer(t)
	s := e2e.StartServer(t, "--cors-allowed-origins="+page.URL)
	page.setHTTPKV(s.URL)
	e2e.StartChromium(t, page.URL+"/")

	var puts []browserPut
	put := func(key string) {
		puts = append(puts, browserPut{rev: s.Put(t, key, "value of "+key), keys: []string{key}})
	}
	waitAll := func(what string) pageState {
		t.Helper()
		var st pageState
		e2e.Eventually(t, e2e.BrowserTimeout, func() (bool, string) {
			st = readPage(t, page)
			return checkPageMessages(t, st, puts), fmt.Sprintf("%s: the page got %d of %d writes:\n%s",
				what, len(st.messages), len(puts), strings.Join(st.log, "\n"))
		})
		return st
	}

	// The page is watching once its created event has come; the first
	// wait includes the browser's start.
	e2e.Eventually(t, 2*e2e.BrowserTimeout, func() (bool, string) {
		st := readPage(t, page)
		return len(st.created) == 1, fmt.Sprintf("the page's EventSource did not connect:\n%s", strings.Join(st.log, "\n"))
	})
	for i := 1; i <= 5; i++ {
		put(fmt.Sprintf("k/%02d", i))
	}
	s.Put(t, "other", "outside the watch")
	put("k/06")
	waitAll("before the restart")
	lastBefore := puts[len(puts)-1].rev

	s.Restart()
	// Written before the page reconnects: the resume must replay them.
	for i := 7; i <= 9; i++ {
		put(fmt.Sprintf("k/%02d", i))
	}
	var reconnected pageState
	e2e.Eventually(t, e2e.BrowserTimeout, func() (bool, string) {
		reconnected = readPage(t, page)
		return len(reconnected.created) == 2, fmt.Sprintf("the page's EventSource did not reconnect:\n%s", strings.Join(reconnected.log, "\n"))
	})
	if got := reconnected.created[1]; got != lastBefore+1 {
		t.Errorf("the reconnected watch starts at revision %d, want %d, after the Last-Event-ID %d the page had", got, lastBefore+1, lastBefore)
	}
	// Written once it is back: live events, a txn among them as one message.
	put("k/10")
	var txn client.TxnResponse
	s.Txn(t, `{"success":[{"put":{"key":"k/11","value":"a"}},{"put":{"key":"x","value":"b"}},{"put":{"key":"k/12","value":"c"}}]}`).
		Ok(t, http.StatusOK, &txn)
	puts = append(puts, browserPut{rev: txn.Header.Revision, keys: []string{"k/11", "k/12"}})
	put("k/13")
	st := waitAll("after the restart")
	t.Logf("the page's EventSource:\n%s", strings.Join(st.log, "\n"))
}
