package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/kv"
	"github.com/rs/zerolog"
	"golang.org/x/sync/semaphore"
)

// TestHeldAnswers: an answer over answerChunk is sent only while its size
// fits in MaxHeldAnswerBytes beside those being sent; past it the answer
// is replaced by a 429, whatever head and headers the handler set; small
// answers never count; and what an answer held is given back when its
// handler returns.
func TestHeldAnswers(t *testing.T) {
	const bound = 3 * answerChunk
	h := &Handler{cfg: wiring{Config: Config{MaxHeldAnswerBytes: bound}}, held: semaphore.NewWeighted(bound)}
	large := bytes.Repeat([]byte("x"), 2*answerChunk)
	answer := func(body []byte) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"7"`)
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(body)
		})
	}
	serve := func(body []byte) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.deadlines(answer(body)).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/kv", nil))
		return rec
	}

	if rec := serve(large); rec.Code != http.StatusCreated || rec.Body.Len() != len(large) || rec.Header().Get("ETag") != `"7"` {
		t.Fatalf("a large answer within the bound: %d, %d bytes, ETag %q", rec.Code, rec.Body.Len(), rec.Header().Get("ETag"))
	}
	// Another answer is being sent and holds two chunks of the three.
	if !h.held.TryAcquire(2 * answerChunk) {
		t.Fatal("the first answer did not give back what it held")
	}
	rec := serve(large)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || rec.Header().Get("ETag") != "" ||
		!bytes.Contains(rec.Body.Bytes(), []byte(`"code":"too_many_requests"`)) {
		t.Fatalf("a large answer past the bound: %d %q, headers %v", rec.Code, rec.Body.String(), rec.Header())
	}
	if rec := serve([]byte("small")); rec.Code != http.StatusCreated || rec.Body.String() != "small" {
		t.Fatalf("a small answer past the bound: %d %q", rec.Code, rec.Body.String())
	}
	h.held.Release(2 * answerChunk)

	// An answer larger than the whole bound is sent when nothing else is.
	huge := bytes.Repeat([]byte("x"), 4*answerChunk)
	if rec := serve(huge); rec.Code != http.StatusCreated || rec.Body.Len() != len(huge) {
		t.Fatalf("an answer larger than the bound, alone: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	// A head without a body still goes out.
	rec = httptest.NewRecorder()
	h.deadlines(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusNoContent {
		t.Fatalf("a head without a body: %d", rec.Code)
	}
	if !h.held.TryAcquire(bound) {
		t.Fatal("answers did not give back all they held")
	}
}

// TestHeldWhileBuilding checks that the keys an answer is built from count
// against the bound once they pass answerChunk: a build that finds no room
// ends with a 429 before copying more, one that does holds its bytes until
// the answer is sent, and the answer tops the hold up to its size.
func TestHeldWhileBuilding(t *testing.T) {
	const bound = 4 * answerChunk
	h := &Handler{cfg: wiring{Config: Config{MaxHeldAnswerBytes: bound}}, held: semaphore.NewWeighted(bound)}
	build := func(keys int64, answer int) (*httptest.ResponseRecorder, error) {
		var err error
		rec := httptest.NewRecorder()
		h.deadlines(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hold := holdBuilding(w)
			for range keys {
				if err = hold(answerChunk / 2); err != nil {
					h.writeError(w, r, err)
					return
				}
			}
			_, _ = w.Write(bytes.Repeat([]byte("x"), answer))
		})).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/kv", nil))
		return rec, err
	}

	// Small builds hold nothing: the bound may be all taken.
	if !h.held.TryAcquire(bound) {
		t.Fatal("the bound is not free")
	}
	if rec, err := build(2, 10); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("a build of one chunk with the bound taken: %v, %d", err, rec.Code)
	}
	if rec, err := build(3, 10); err == nil || rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("a build past one chunk with the bound taken: %v, %d %v", err, rec.Code, rec.Header())
	}
	h.held.Release(bound)

	// A build of three chunks whose answer is four holds four, and gives
	// them all back.
	if rec, err := build(6, 4*answerChunk); err != nil || rec.Code != http.StatusOK || rec.Body.Len() != 4*answerChunk {
		t.Fatalf("a build within the bound: %v, %d, %d bytes", err, rec.Code, rec.Body.Len())
	}
	if !h.held.TryAcquire(bound) {
		t.Fatal("a build did not give back what it held")
	}
	h.held.Release(bound)
	if hold := holdBuilding(httptest.NewRecorder()); hold != nil {
		t.Fatal("a request without deadlines holds")
	}
}

// holdSpy is the embedded backend, reporting whether the ranges it is
// asked for carry a Hold that refuses a key once the bound is taken.
type holdSpy struct {
	*embedded.Backend
	refused []bool
}

func (s *holdSpy) check(l *kv.ReadLimits) {
	s.refused = append(s.refused, l != nil && l.Hold != nil && l.Hold(2*answerChunk) != nil)
}

func (s *holdSpy) Range(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error) {
	s.check(r.Options.Limits)
	return s.Backend.Range(ctx, r)
}

func (s *holdSpy) ViewRange(ctx context.Context, r kv.RangeRequest, fn func(*kv.RangeResult) error) error {
	s.check(r.Options.Limits)
	return s.Backend.ViewRange(ctx, r, fn)
}

func (s *holdSpy) Txn(ctx context.Context, r kv.TxnRequest, guard kv.LeaseGuard) (kv.TxnResult, error) {
	s.check(r.Success[0].Range.Options.Limits)
	return s.Backend.Txn(ctx, r, guard)
}

// TestHeldThroughRoutes checks that the routes that build large answers
// find the held bytes through the writer the router and middleware hand
// them: with the bound all taken, the Hold a list's and a txn's ranges
// get refuses a key past answerChunk, so the read ends before copying
// it, and the answer is a 429 that changes nothing. A wrapper on the way
// that hid the writer would give them no Hold, and fail this.
func TestHeldThroughRoutes(t *testing.T) {
	const bound = 4 * answerChunk
	spy := &holdSpy{Backend: storetest.Open(t, embedded.Options{})}
	h := NewHandler(spy, nil, zerolog.Nop(), Config{MaxHeldAnswerBytes: bound})
	t.Cleanup(h.Close)
	value := strings.Repeat("v", answerChunk/4)
	for i := range 8 { // 2 chunks of keys in all
		mustServe(t, h, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/big/%d", i), value)
	}
	requests := []struct{ name, method, target, body string }{
		{"list", "GET", "/v1/kv?key=big/&prefix=true", ""},
		{"txn", "POST", "/v1/txn", `{"success":[{"range":{"key":"big/","prefix":true}}]}`},
	}
	if !h.held.TryAcquire(bound) {
		t.Fatal("the bound is not free")
	}
	for _, r := range requests {
		spy.refused = nil
		rec := serve(t, h, r.method, r.target, r.body)
		if rec.Code != http.StatusTooManyRequests || errorCode(t, rec) != "too_many_requests" {
			t.Errorf("%s with the bound taken: %d %s, want 429 too_many_requests", r.name, rec.Code, rec.Body)
		}
		if len(spy.refused) != 1 || !spy.refused[0] {
			t.Errorf("%s with the bound taken: the read's Hold refused %v, want [true]", r.name, spy.refused)
		}
	}
	h.held.Release(bound)
	for _, r := range requests {
		rec := mustServe(t, h, http.StatusOK, r.method, r.target, r.body)
		if n := strings.Count(rec.Body.String(), value); n != 8 {
			t.Errorf("%s with the bound free: %d values in the answer, want 8", r.name, n)
		}
	}
	if !h.held.TryAcquire(bound) {
		t.Fatal("the answers did not give back what they held")
	}
}
