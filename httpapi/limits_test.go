package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"golang.org/x/sync/semaphore"
)

// TestHeldAnswers: an answer over answerChunk is sent only while its size
// fits in MaxHeldAnswerBytes beside those being sent; past it the answer
// is replaced by a 429, whatever head and headers the handler set; small
// answers never count; and what an answer held is given back when its
// handler returns.
func TestHeldAnswers(t *testing.T) {
	const bound = 3 * answerChunk
	h := &Handler{cfg: Config{MaxHeldAnswerBytes: bound}, held: semaphore.NewWeighted(bound)}
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
	h := &Handler{cfg: Config{MaxHeldAnswerBytes: bound}, held: semaphore.NewWeighted(bound)}
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
