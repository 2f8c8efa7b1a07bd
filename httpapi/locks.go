package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// Bounds of the timeout query parameter of a lock or a campaign.
const (
	defaultLockTimeout = 30 * time.Second
	maxLockTimeout     = 5 * time.Minute
)

// pathName returns the name of a lock or an election: the escaped path
// after prefix, without suffix, percent-decoded as keys are. The routes
// take one path segment, so a name's slashes come as %2F.
func pathName(r *http.Request, prefix, suffix string) ([]byte, *apiError) {
	raw, ok := strings.CutPrefix(r.URL.EscapedPath(), prefix)
	if !ok || !strings.HasSuffix(raw, suffix) {
		return nil, badRequest("no name in path")
	}
	name, err := url.PathUnescape(strings.TrimSuffix(raw, suffix))
	if err != nil {
		return nil, badRequest("the name is not a valid escaped path: %v", err)
	}
	if name == "" {
		return nil, badRequest("the name must not be empty")
	}
	return []byte(name), nil
}

// waitParams are the query parameters of a lock and a campaign.
var waitParams = wire.Params{"timeout"}

// unlockParams are the query parameters of DELETE /v1/locks/{name}.
var unlockParams = wire.Params{"key", "key_base64"}

// nameRequest reads what every lock and election request starts with:
// the backend, the name in the path (between prefix and suffix) and, if v
// is not nil, the JSON body; then it checks that the caller may write
// (or, with write false, read) every key of the lock or election. ok is
// false when the request has been answered.
func (h *Handler) nameRequest(w http.ResponseWriter, r *http.Request, prefix, suffix string, v any, write bool) (concurrency.Backend, []byte, bool) {
	name, aerr := pathName(r, prefix, suffix)
	if aerr != nil {
		h.writeError(w, r, aerr)
		return nil, nil, false
	}
	if v != nil {
		if err := decodeJSON(r, v); err != nil {
			h.writeError(w, r, err)
			return nil, nil, false
		}
	}
	if !h.authorize(w, r, nameAccess(name, write)) {
		return nil, nil, false
	}
	return lockBackend{Backend: h.cfg.Backend, guard: h.leaseGuard(r)}, name, true
}

// lockBackend is the backend as the locks and elections of one request
// take it (a concurrency.Backend): its txns carry the request's lease
// guard, so that a put with a lease needs write access to the keys
// already attached to the lease, checked inside its write, as for
// PUT /v1/kv (lease_authz.go).
type lockBackend struct {
	Backend
	guard kv.LeaseGuard
}

func (b lockBackend) Txn(ctx context.Context, r kv.TxnRequest) (kv.TxnResult, error) {
	return b.Backend.Txn(ctx, r, b.guard)
}

// waitRequest is nameRequest for a lock or a campaign, which read the
// timeout query parameter too and need a lease ID: the body's field that
// lease points to.
func (h *Handler) waitRequest(w http.ResponseWriter, r *http.Request, prefix, suffix string, v any, lease *int64) (concurrency.Backend, []byte, time.Duration, bool) {
	// The query first: a bad one answers before the body is read.
	q := newQuery(r, waitParams)
	timeout := q.Duration("timeout", defaultLockTimeout, maxLockTimeout)
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return nil, nil, 0, false
	}
	b, name, ok := h.nameRequest(w, r, prefix, suffix, v, true)
	if !ok {
		return nil, nil, 0, false
	}
	if aerr := checkLeaseID("lease", *lease); aerr != nil {
		h.writeError(w, r, aerr)
		return nil, nil, 0, false
	}
	return b, name, timeout, true
}

// checkLeaseID refuses a lease ID outside [1, 2^53-1].
func checkLeaseID(field string, id int64) *apiError {
	if id < 1 || id > maxLeaseID {
		return badRequest("%s must be a lease ID in [1, 2^53-1], not %d", field, id)
	}
	return nil
}

// nameAccess is the access a lock or an election needs: its whole prefix.
func nameAccess(name []byte, write bool) Access {
	r := []keyrange.Range{keyrange.Between(concurrency.Prefix(name), concurrency.PrefixEnd(name))}
	if write {
		return Access{Write: r}
	}
	return Access{Read: r}
}

// errWaitShutdown ends the waits of locks and campaigns when the handler
// begins to close; it answers 503.
var errWaitShutdown = fmt.Errorf("%w: shutting down", kv.ErrClosed)

// waitContext is r's context, canceled also (with errWaitShutdown) when
// the handler begins to close, so that a lock or a campaign waiting for
// minutes does not hold the server's shutdown. Call cancel when done: it
// ends the goroutine that waits for the close.
func (h *Handler) waitContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(r.Context())
	go func() {
		select {
		case <-h.streams.Stop():
			cancel(errWaitShutdown)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

// lock serves POST /v1/locks/{name}.
//
//	@Summary		Acquire a lock
//	@Description	Waits until the lease holds the lock called name, as etcd's v3lock: the lease's key name/<lease ID in lowercase hex> is put under the prefix name/, attached to the lease, and the lock is held once no older key is left there (FIFO by create revision). The key goes when the lock is released, and also when the lease expires or is revoked: a crashed holder lets go after its TTL. A lease that holds the lock already gets it again at once.
//	@Description	If the lock is not held within timeout, or the client leaves, the waiting key is deleted again and nothing is left behind.
//	@Tags			locks
//	@ID				lockAcquire
//	@Accept			json
//	@Produce		json
//	@Param			name	path		string				true	"The lock's name, one path segment, percent-decoded (a slash in it is %2F). Not empty."
//	@Param			timeout	query		string				false	"How long to wait, a Go duration from 0s (try once) to 5m; 30s when absent."	example(10s)
//	@Param			lock	body		wire.LockRequest		true	"The lease that is to hold the lock."
//	@Success		200		{object}	wire.LockResponse		"Held; the header's revision is the one at which it was seen held."
//	@Failure		400		{object}	wire.ErrorResponse			"invalid_argument: malformed JSON, an empty name, a lease ID out of range, a bad timeout."
//	@Failure		401		{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403		{object}	wire.ErrorResponse			"permission_denied: the caller may not write every key with the prefix name/."
//	@Failure		404		{object}	wire.ErrorResponse			"lease_not_found: the lease does not exist, or it ended while waiting; key_not_found: the waiting key was deleted by someone else."
//	@Failure		408		{object}	wire.ErrorResponse			"lock_timeout: not held within timeout; the waiting key was removed."
//	@Failure		413		{object}	wire.ErrorResponse			"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		500		{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503		{object}	wire.ErrorResponse			"unavailable: the server is shutting down or its backend failed."
//	@Failure		507		{object}	wire.ErrorResponse			"no_space: the backend quota is exceeded (NOSPACE alarm)."
//	@Header			200		{integer}	X-Revision			"The revision at which the lock was seen held."
//	@Header			401		{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/locks/{name} [post]
func (h *Handler) lock(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Lease int64 `json:"lease"`
	}
	b, name, timeout, ok := h.waitRequest(w, r, "/v1/locks/", "", &req, &req.Lease)
	if !ok {
		return
	}
	ctx, cancel := h.waitContext(r)
	defer cancel()
	held, err := concurrency.Lock(ctx, b, name, req.Lease, timeout)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	setRevision(w, held.Revision)
	body := wire.AppendBytesField(wire.AppendHeader(nil, held.Revision), "key", held.Key, false)
	writeRawJSON(w, http.StatusOK, append(body, '}', '\n'))
}

// unlock serves DELETE /v1/locks/{name}.
//
//	@Summary		Release a lock
//	@Description	Deletes the owner key a lock returned, as etcd's v3lock: the next waiter, if any, then holds the lock. Releasing a key that no longer exists does nothing.
//	@Tags			locks
//	@ID				lockRelease
//	@Produce		json
//	@Param			name		path		string				true	"The lock's name, one path segment, percent-decoded (a slash in it is %2F). Not empty."
//	@Param			key			query		string				false	"The owner key the lock returned; it must start with name/. key or key_base64 is required."
//	@Param			key_base64	query		string				false	"The owner key in standard base64, for bytes that are not UTF-8."	format(byte)
//	@Success		200			{object}	wire.HeaderResponse	"Released; the header's revision is the delete's (or the current one when there was nothing to delete)."
//	@Failure		400			{object}	wire.ErrorResponse			"invalid_argument: an empty name, no key, or a key that is not under name/."
//	@Failure		401			{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403			{object}	wire.ErrorResponse			"permission_denied: the caller may not write every key with the prefix name/."
//	@Failure		500			{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503			{object}	wire.ErrorResponse			"unavailable: the server is shutting down or its backend failed."
//	@Header			200			{integer}	X-Revision			"The header's revision."
//	@Header			401			{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/locks/{name} [delete]
func (h *Handler) unlock(w http.ResponseWriter, r *http.Request) {
	b, name, ok := h.nameRequest(w, r, "/v1/locks/", "", nil, true)
	if !ok {
		return
	}
	q := newQuery(r, unlockParams)
	key := q.Bytes("key")
	if q.Err() == nil && len(key) == 0 {
		q.Failf("key (the owner key the lock returned) is required")
	}
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	rev, err := concurrency.Unlock(r.Context(), b, name, key)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeHeaderOnly(w, rev)
}

// writeHeaderOnly answers {"header":{"revision":rev}}.
func (h *Handler) writeHeaderOnly(w http.ResponseWriter, rev int64) {
	setRevision(w, rev)
	writeRawJSON(w, http.StatusOK, append(wire.AppendHeader(nil, rev), '}', '\n'))
}
