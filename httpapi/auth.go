package httpapi

import (
	"net/http"
	"strings"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/kv"
)

// authAuthorizer checks requests against an auth.Store: with auth enabled,
// a valid token, and permissions covering every key the request touches.
type authAuthorizer struct {
	a *auth.Store
}

// errQueryToken: a token in the query string of a request that must send
// it in its Authorization header.
var errQueryToken = kv.Errorf(auth.ErrUnauthenticated, "access_token in the query is accepted only by the streams a browser's EventSource opens (GET /v1/watch), which cannot set headers: send \"Authorization: Bearer <token>\"")

// requestToken returns the bearer token of r: the Authorization header,
// or, on a stream a browser opens with EventSource (which cannot set
// headers), the access_token query parameter. Elsewhere a token in the
// query is refused: URLs end up in logs, histories and Referer headers.
func requestToken(r *http.Request) (string, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			return strings.TrimSpace(h[7:]), nil
		}
		return "", nil
	}
	q := r.URL.Query()
	if !q.Has("access_token") {
		return "", nil
	}
	if !queryTokenAllowed(r) {
		return "", errQueryToken
	}
	return q.Get("access_token"), nil
}

// queryTokenAllowed reports whether r is a stream a browser opens with
// EventSource: a watch, the stream of a multi-watch stream, or the observe
// stream of an election. (Paths the router does not have answer 404.)
func queryTokenAllowed(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	p := r.URL.Path
	switch {
	case p == "/v1/watch":
		return true
	case strings.HasPrefix(p, "/v1/watch/streams/"):
		return !strings.Contains(strings.TrimPrefix(p, "/v1/watch/streams/"), "/")
	case strings.HasPrefix(p, "/v1/elections/"):
		return strings.HasSuffix(p, "/observe")
	}
	return false
}

// user returns the user r acts as.

// Authenticate checks that r carries a valid token, while auth is on.
func (x authAuthorizer) Authenticate(r *http.Request) error {
	_, err := x.Identify(r)
	return err
}

// Authorize asks auth's policy whether r's caller may have a.
func (x authAuthorizer) Authorize(r *http.Request, a Access) error {
	if !x.a.Enabled() {
		return nil
	}
	tok, err := requestToken(r)
	if err != nil {
		return err
	}
	return x.a.Authorize(tok, a)
}

// Unrestricted reports whether r may do anything: auth is disabled, or
// r carries a valid token of a root user.
func (x authAuthorizer) Unrestricted(r *http.Request) bool {
	if !x.a.Enabled() {
		return true
	}
	tok, err := requestToken(r)
	return err == nil && x.a.Unrestricted(tok)
}

// Identify returns who r acts as: no one while auth is disabled, else its
// token's user, the token, and when it expires.
func (x authAuthorizer) Identify(r *http.Request) (streamCaller, error) {
	if !x.a.Enabled() {
		return streamCaller{}, nil
	}
	tok, err := requestToken(r)
	if err != nil {
		return streamCaller{}, err
	}
	return x.a.Identify(tok)
}

// Recheck decides a again for the caller of a stream (see auth.Store.Recheck).
func (x authAuthorizer) Recheck(c streamCaller, a Access) error { return x.a.Recheck(c, a) }

// Changed lets watch streams check again when users or roles change.
func (x authAuthorizer) Changed() <-chan struct{} { return x.a.Changed() }

// authStore returns the auth store, or answers 503 when none is served.
func (h *Handler) authStore(w http.ResponseWriter) *auth.Store {
	if h.cfg.Auth == nil {
		answerError(w, errorf(kv.CodeUnavailable, "auth is not served"))
	}
	return h.cfg.Auth
}

// admin answers the request unless auth is served and the caller is root
// (or auth is disabled).
func (h *Handler) admin(w http.ResponseWriter, r *http.Request) *auth.Store {
	a := h.authStore(w)
	if a == nil || !h.authorize(w, r, Access{Admin: true}) {
		return nil
	}
	return a
}

// adminChange runs a change that answers an empty object.
func (h *Handler) adminChange(w http.ResponseWriter, r *http.Request, change func(*auth.Store) error) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	if err := change(a); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
