package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/waittest"
)

// clientFrom returns a client of srv whose connections come from the
// loopback address ip (Linux answers on all of 127/8).
func clientFrom(tb testing.TB, ip string) *http.Client {
	tb.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	tb.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// startStream opens GET target as a stream and returns its status, its
// error code if refused, whether the answer closed its connection, and
// what ends the stream.
func startStream(tb testing.TB, c *http.Client, srv *httptest.Server, target string) (status int, code string, closes bool, end func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+target, nil)
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		tb.Fatalf("GET %s: %v", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		b, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(b, &e)
		return resp.StatusCode, e.Error.Code, resp.Close, func() {}
	}
	tb.Cleanup(func() { cancel(); resp.Body.Close() })
	return resp.StatusCode, "", false, func() { cancel(); resp.Body.Close() }
}

// TestStreamConnectionsBounded: streams, each holding a connection, are
// bounded for the server whatever the number of client addresses, and
// for each address; past either bound a new one answers 429
// too_many_requests in the API's format and its connection closes. Every
// kind counts: single watches, readers of streams of many watchers and
// observers. One that ends gives its place back.
func TestStreamConnectionsBounded(t *testing.T) {
	h, _ := newTestHandler(t, Config{KeepAliveInterval: time.Hour, MaxStreamConnections: 4, MaxStreamConnectionsPerUser: 2})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	a, b, c := clientFrom(t, "127.0.0.2"), clientFrom(t, "127.0.0.3"), clientFrom(t, "127.0.0.4")
	want := func(c *http.Client, target string, status int, code string) func() {
		t.Helper()
		got, gotCode, closes, end := startStream(t, c, srv, target)
		if got != status || gotCode != code || status != http.StatusOK && !closes {
			t.Fatalf("GET %s = %d %q (connection closes: %v), want %d %q", target, got, gotCode, closes, status, code)
		}
		return end
	}
	endA := want(a, "/v1/watch?key=a", http.StatusOK, "")
	want(a, "/v1/elections/e/observe", http.StatusOK, "")
	want(a, "/v1/watch?key=a", http.StatusTooManyRequests, "too_many_requests") // a's share
	rec := mustServe(t, h, http.StatusCreated, "POST", "/v1/watch/streams", "")
	var created watchStreamCreatedDoc
	decodeJSONBody(t, rec.Body.Bytes(), &created)
	want(b, "/v1/watch/streams/"+created.Stream, http.StatusOK, "")
	want(b, "/v1/watch?key=b", http.StatusOK, "")
	want(c, "/v1/watch?key=c", http.StatusTooManyRequests, "too_many_requests") // the server's
	if n := h.streamConns.held(); n != 4 {
		t.Fatalf("%d streams counted, want 4", n)
	}
	endA()
	if !waittest.For(streamTimeout, func() bool { return h.streamConns.held() == 3 }) {
		t.Fatalf("%d streams counted once one ended, want 3", h.streamConns.held())
	}
	want(c, "/v1/watch?key=c", http.StatusOK, "")
}

// TestWatchersBounded: watchers are bounded for the server, single
// watches and the watchers of streams of many watchers together,
// whatever the number of streams and client addresses (before, the bound
// was per stream and streams per address: four addresses held 1.28
// million watchers), and for each address; past either a new one
// answers 429. One that ends gives its place back, and so do a stream's
// when it is deleted.
func TestWatchersBounded(t *testing.T) {
	h, _ := newTestHandler(t, Config{KeepAliveInterval: time.Hour, MaxWatchers: 10, MaxWatchersPerUser: 6})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	post := func(c *http.Client, path, body string) (int, string) {
		t.Helper()
		resp, err := c.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	newStream := func(c *http.Client) string {
		t.Helper()
		status, body := post(c, "/v1/watch/streams", "")
		var created watchStreamCreatedDoc
		if status != http.StatusCreated || json.Unmarshal([]byte(body), &created) != nil {
			t.Fatalf("POST /v1/watch/streams = %d %s", status, body)
		}
		return created.Stream
	}
	addrs := []*http.Client{clientFrom(t, "127.0.0.2"), clientFrom(t, "127.0.0.3"), clientFrom(t, "127.0.0.4")}
	added := make([]int, len(addrs))
	for i, c := range addrs {
		for range 2 {
			id := newStream(c)
			for {
				status, body := post(c, "/v1/watch/streams/"+id+"/watches", fmt.Sprintf(`{"key":"k%d"}`, added[i]))
				if status == http.StatusTooManyRequests && strings.Contains(body, "too_many_requests") {
					break
				}
				if status != http.StatusCreated {
					t.Fatalf("adding a watcher = %d %s", status, body)
				}
				added[i]++
			}
		}
	}
	if added[0] != 6 || added[1] != 4 || added[2] != 0 || h.watchers.held() != 10 {
		t.Fatalf("watchers added from three addresses: %v (%d counted), want 6 (the share of one), 4 (the rest of the server's 10), 0", added, h.watchers.held())
	}
	if status, _, _, _ := startStream(t, addrs[2], srv, "/v1/watch?key=x"); status != http.StatusTooManyRequests {
		t.Fatalf("a single watch with the server's watchers all taken = %d, want 429", status)
	}
	// A stream deleted gives its watchers back.
	for _, id := range h.wstreams.IDs() {
		mustServe(t, h, http.StatusOK, "DELETE", "/v1/watch/streams/"+id, "")
	}
	if n := h.watchers.held(); n != 0 {
		t.Fatalf("%d watchers counted once every stream was deleted, want 0", n)
	}
	status, _, _, end := startStream(t, addrs[2], srv, "/v1/watch?key=x")
	if status != http.StatusOK || h.watchers.held() != 1 {
		t.Fatalf("a single watch once watchers were given back = %d (%d counted), want 200 and 1", status, h.watchers.held())
	}
	end()
	if !waittest.For(streamTimeout, func() bool { return h.watchers.held() == 0 }) {
		t.Fatalf("%d watchers counted once the single watch ended, want 0", h.watchers.held())
	}
}
