package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/ssetest"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/internal/wiretest"

	"github.com/httpkv/httpkv/wire"
)

// newTestHandler returns the real handler over the embedded backend in a
// temporary directory. cfg.Backend is filled in; the other fields are
// used as given.
func newTestHandler(tb testing.TB, cfg Config) (*Handler, *embedded.Backend) {
	tb.Helper()
	b := storetest.Open(tb, embedded.Options{})
	return NewHandler(b, nil, zerolog.Nop(), cfg), b
}

// serve runs one request through h and returns the recorded answer.
func serve(tb testing.TB, h http.Handler, method, target, body string, header ...string) *httptest.ResponseRecorder {
	tb.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// mustServe is serve that fails unless the status is want.
func mustServe(tb testing.TB, h http.Handler, want int, method, target, body string, header ...string) *httptest.ResponseRecorder {
	tb.Helper()
	rec := serve(tb, h, method, target, body, header...)
	if rec.Code != want {
		tb.Fatalf("%s %s = %d %s, want %d", method, target, rec.Code, rec.Body, want)
	}
	return rec
}

// errorCode returns the code of an error answer, failing if the body is
// not the contract's error object.
func errorCode(tb testing.TB, rec *httptest.ResponseRecorder) string {
	tb.Helper()
	var e wire.ErrorResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" {
		tb.Fatalf("error body %q is not {\"error\":{\"code\",...}} (%v)", rec.Body, err)
	}
	return e.Error.Code
}

// listKeys lists with the query q and returns the keys found.
func listKeys(tb testing.TB, h http.Handler, q string) []string {
	tb.Helper()
	rec := mustServe(tb, h, http.StatusOK, "GET", "/v1/kv?"+q, "")
	var body wire.ListResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		tb.Fatalf("GET /v1/kv?%s: body %q: %v", q, rec.Body, err)
	}
	keys := make([]string, 0, len(body.KVs))
	for _, kv := range body.KVs {
		keys = append(keys, wiretest.Key(kv))
	}
	return keys
}

// sseMessage is one block of a text/event-stream, as the tests' one
// parser (ssetest) reads it.
type sseMessage = ssetest.Message

// sseReader parses a text/event-stream in a goroutine of its own and
// hands out its blocks (a block with only a retry field included, so a
// test sees everything the server framed but keep-alive comments).
type sseReader struct {
	msgs chan sseMessage
	done chan struct{} // closed when the stream ends
	err  error         // why it ended; set before done is closed
}

func newSSEReader(r io.Reader) *sseReader {
	s := &sseReader{msgs: make(chan sseMessage, 1024), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		p := ssetest.NewParser(r)
		for {
			m, err := p.Next()
			if err != nil {
				s.err = err
				return
			}
			s.msgs <- m
		}
	}()
	return s
}

// next returns the next block that carries data, waiting up to timeout.
func (s *sseReader) next(tb testing.TB, timeout time.Duration) sseMessage {
	tb.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case m := <-s.msgs:
			if m.Data == "" {
				continue
			}
			return m
		case <-s.done:
			select {
			case m := <-s.msgs:
				if m.Data != "" {
					return m
				}
				continue
			default:
			}
			tb.Fatalf("watch stream ended (%v) while a message was awaited", s.err)
		case <-timer.C:
			tb.Fatalf("no watch message within %v", timeout)
		}
	}
}

// openWatch opens GET target on srv as a stream, checks the answer is an
// event stream and returns its reader; the stream is closed on cleanup.
func openWatch(tb testing.TB, client *http.Client, srv *httptest.Server, target string, header ...string) *sseReader {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+target, nil)
	if err != nil {
		cancel()
		tb.Fatalf("NewRequest(%q): %v", target, err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		tb.Fatalf("GET %s: %v", target, err)
	}
	tb.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("GET %s = %d %q %s, want 200 text/event-stream", target, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return newSSEReader(resp.Body)
}
