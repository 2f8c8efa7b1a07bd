package httpapi

import (
	"crypto/rand"
	"net/http"
	"strconv"
	"sync/atomic"
)

// maxRequestIDLen bounds a request id a client sends in X-Request-Id: it
// is logged with every line of the request.
const maxRequestIDLen = 64

// requestIDs hands out request ids: a random prefix per Handler and a
// counter, unless the client sent a usable one.
type requestIDs struct {
	prefix string
	next   atomic.Uint64
}

func newRequestIDs() *requestIDs {
	return &requestIDs{prefix: rand.Text()[:10]}
}

// new returns a request id of the server's own.
func (ids *requestIDs) new() string {
	var buf [64]byte
	b := append(append(buf[:0], ids.prefix...), '-')
	return string(strconv.AppendUint(b, ids.next.Add(1), 10))
}

// validRequestID reports whether a client's X-Request-Id is kept: at
// most maxRequestIDLen characters of letters, digits and ._:/+=- (it goes
// to the logs as is).
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		switch c {
		case '.', '_', ':', '/', '+', '=', '-':
			ok = true
		}
		if !ok {
			return false
		}
	}
	return true
}

// noSniffValue (X-Content-Type-Options: browsers take every answer for
// the type it says it is) and jsonContentType are header values answers
// share rather than allocates: net/http only reads them, and a later Set
// or Add on the header replaces or copies the slice.
var (
	noSniffValue    = []string{"nosniff"}
	jsonContentType = []string{"application/json; charset=utf-8"}
)

// checkQuery refuses a malformed query string (a bad percent escape, a
// semicolon) with 400, where url.Values would drop the parameter and the
// request would run as if it had not been given: a list without its key
// lists every key.
func (h *Handler) checkQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := malformedQuery(r.URL.RawQuery); msg != "" {
			h.writeError(w, r, badRequest("malformed query string: %s", msg))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// malformedQuery says what url.ParseQuery would refuse in raw, or ""
// when it parses, without building the values: a semicolon, or a percent
// sign not followed by two hex digits.
func malformedQuery(raw string) string {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ';':
			return "a semicolon separator"
		case '%':
			if i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
				return "a bad percent escape at byte " + strconv.Itoa(i)
			}
		}
	}
	return ""
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
