package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// authWatchPage opens three EventSources on httpkv from another origin:
// "token" with a token in access_token (a browser cannot set a header on
// an EventSource), "none" with no token and "denied" with a token whose
// user may not read the range. It reports what each does to its own
// origin's /report, in order.
const authWatchPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>httpkv auth watch</title></head>
<body><script>
"use strict";
const sources = {{SOURCES}};
let seq = 0;
let chain = Promise.resolve();
function report(source, kind, fields) {
	const body = JSON.stringify(Object.assign({seq: seq++, source: source, kind: kind}, fields));
	chain = chain.then(() => fetch("/report", {method: "POST", body: body})).catch(() => {});
}
for (const [name, url] of Object.entries(sources)) {
	const es = new EventSource(url);
	es.onopen = () => report(name, "open", {});
	es.onerror = () => report(name, "error", {state: es.readyState});
	es.onmessage = (e) => report(name, "message", {data: e.data, id: e.lastEventId});
	for (const ev of ["created", "canceled", "compacted"]) {
		es.addEventListener(ev, (e) => report(name, ev, {data: e.data, id: e.lastEventId}));
	}
}
</script></body></html>
`

// authPageReport is one thing one of the page's EventSources did.
type authPageReport struct {
	Seq    int    `json:"seq"`
	Source string `json:"source"`
	Kind   string `json:"kind"`
	Data   string `json:"data"`
	ID     string `json:"id"`
	State  int    `json:"state"`
}

func (r authPageReport) String() string {
	if r.Kind == "error" {
		return fmt.Sprintf("%s: error(readyState %d)", r.Source, r.State)
	}
	return fmt.Sprintf("%s: %s id=%q %s", r.Source, r.Kind, r.ID, r.Data)
}

// authPageServer serves authWatchPage and collects its reports.
type authPageServer struct {
	*httptest.Server
	mu      sync.Mutex
	sources map[string]string // EventSource name -> URL
	reports []authPageReport
	bad     []string
}

func startAuthPageServer(tb testing.TB) *authPageServer {
	tb.Helper()
	p := &authPageServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		sources, _ := json.Marshal(p.sources)
		p.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, strings.ReplaceAll(authWatchPage, "{{SOURCES}}", string(sources)))
	})
	mux.HandleFunc("POST /report", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var rep authPageReport
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

// of returns the reports of one EventSource so far, and the log of all.
func (p *authPageServer) of(tb testing.TB, source string) ([]authPageReport, string) {
	tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.bad) > 0 {
		tb.Fatalf("the page sent reports the test cannot use: %q", p.bad)
	}
	var out []authPageReport
	var log []string
	for _, r := range p.reports {
		log = append(log, r.String())
		if r.Source == source {
			out = append(out, r)
		}
	}
	return out, strings.Join(log, "\n")
}

// TestAuthBrowserEventSource runs a page in headless Chromium, on an
// origin other than httpkv's, whose EventSource passes its token in the
// access_token query: it receives the puts root makes in its range. The
// page's EventSources without a token, or with one not allowed the range,
// fail for good (readyState CLOSED): a 401 or 403 is not retried.
func TestAuthBrowserEventSource(t *testing.T) {
	t.Parallel()
	page := startAuthPageServer(t)
	s := e2e.StartServer(t, e2e.AuthBcryptCost, "--cors-allowed-origins="+page.URL)
	none := e2e.AuthCaller{}
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"root","password":"root-pw"}`)
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"alice","password":"alice-pw"}`)
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"app"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/roles/app/permissions", `{"key":"app/","prefix":true,"type":"read"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/root/roles/root", "")
	e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/alice/roles/app", "")
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/enable", "")
	root := e2e.AuthCaller{Name: "root", Token: e2e.AuthLogin(t, s, "root", "root-pw")}
	alice := e2e.AuthLogin(t, s, "alice", "alice-pw")

	watch := s.URL + "/v1/watch?key=app/&prefix=true"
	page.mu.Lock()
	page.sources = map[string]string{
		"token":  watch + "&access_token=" + url.QueryEscape(alice),
		"none":   watch,
		"denied": s.URL + "/v1/watch?key=etc&access_token=" + url.QueryEscape(alice),
	}
	page.mu.Unlock()
	e2e.StartChromium(t, page.URL+"/")

	e2e.Eventually(t, 2*e2e.BrowserTimeout, func() (bool, string) {
		reps, log := page.of(t, "token")
		return slices.ContainsFunc(reps, func(r authPageReport) bool { return r.Kind == "created" }),
			"the page's EventSource with access_token did not start watching:\n" + log
	})
	var want []string
	for _, k := range []string{"app/1", "etc", "app/2"} {
		rev := s.Do(t, "PUT", e2e.KeyPath(k), []byte("v-"+k), root.Header()...).Want(t, http.StatusOK).Revision(t)
		if strings.HasPrefix(k, "app/") {
			want = append(want, fmt.Sprintf("%d put %s=v-%s", rev, k, k))
		}
	}
	e2e.Eventually(t, e2e.BrowserTimeout, func() (bool, string) {
		reps, log := page.of(t, "token")
		var got []string
		for _, r := range reps {
			switch r.Kind {
			case "open", "created":
			case "message":
				var d client.WatchEvents
				if err := json.Unmarshal([]byte(r.Data), &d); err != nil || len(d.Events) != 1 {
					t.Fatalf("the page got %s: want one event as JSON", r)
				}
				got = append(got, fmt.Sprintf("%s %s %s=%s", r.ID, d.Events[0].Type, e2e.KeyOf(&d.Events[0].Kv), e2e.ValueOf(&d.Events[0].Kv)))
			default:
				t.Fatalf("the EventSource with access_token got %s:\n%s", r, log)
			}
		}
		if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
			t.Fatalf("the page got %q, want %q:\n%s", got, want, log)
		}
		return len(got) == len(want), fmt.Sprintf("the page got %d of %d puts:\n%s", len(got), len(want), log)
	})
	for _, source := range []string{"none", "denied"} {
		e2e.Eventually(t, e2e.BrowserTimeout, func() (bool, string) {
			reps, log := page.of(t, source)
			for _, r := range reps {
				if r.Kind != "error" {
					t.Fatalf("the EventSource %q got %s, want only an error:\n%s", source, r, log)
				}
			}
			// readyState 2 is CLOSED: the browser gave up, as it must on
			// an answer other than 200 text/event-stream.
			return len(reps) == 1 && reps[0].State == 2, fmt.Sprintf("the EventSource %q did not fail for good:\n%s", source, log)
		})
	}
}
