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
