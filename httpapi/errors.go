package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/kv"
)

// apiError is an error with its place in the contract's error table.
type apiError struct {
	status  int
	code    string
	message string
	// extra fields of the error object, e.g. compact_revision.
	extra map[string]any
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

// badRequest reports malformed input.
func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "invalid_argument", message: fmt.Sprintf(format, args...)}
}

// errorTable maps domain errors to statuses and codes, checked in order
// with errors.Is so wrapped errors match.
var errorTable = []ErrorMapping{
	{kv.ErrCompacted, http.StatusGone, "compacted"},
	{kv.ErrFutureRevision, http.StatusBadRequest, "future_revision"},
	{kv.ErrKeyNotFound, http.StatusNotFound, "key_not_found"},
	{kv.ErrLeaseNotFound, http.StatusNotFound, "lease_not_found"},
	{kv.ErrLeaseExists, http.StatusConflict, "already_exists"},
	{kv.ErrInvalidArgument, http.StatusBadRequest, "invalid_argument"},
	{kv.ErrNoSpace, http.StatusInsufficientStorage, "no_space"},
	{kv.ErrClosed, http.StatusServiceUnavailable, "unavailable"},
	{kv.ErrBackendFailed, http.StatusServiceUnavailable, "unavailable"},
	{kv.ErrUnavailable, http.StatusServiceUnavailable, "unavailable"},
	{concurrency.ErrInvalid, http.StatusBadRequest, "invalid_argument"},
	{concurrency.ErrTimeout, http.StatusRequestTimeout, "lock_timeout"},
	{concurrency.ErrLeaseNotFound, http.StatusNotFound, "lease_not_found"},
	{concurrency.ErrKeyDeleted, http.StatusNotFound, "key_not_found"},
	{concurrency.ErrNoLeader, http.StatusNotFound, "no_leader"},
	{concurrency.ErrNotLeader, http.StatusPreconditionFailed, "not_leader"},
	{concurrency.ErrWatchEnded, http.StatusServiceUnavailable, "unavailable"},
}

// toAPIError finds err's row in the contract. ok is false for errors that
// are not the client's doing: those answer 500.
func (h *Handler) toAPIError(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, true
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &apiError{status: http.StatusRequestEntityTooLarge, code: "request_too_large",
			message: fmt.Sprintf("request body larger than %d bytes", mbe.Limit)}, true
	}
	var tle *kv.TooLargeError
	if errors.As(err, &tle) {
		return answerTooLarge(tle), true
	}
	for _, m := range append(errorTable, h.extraErrors...) {
		if errors.Is(err, m.Target) {
			ae := &apiError{status: m.Status, code: m.Code, message: err.Error()}
			if m.Status >= 500 {
				// The server's own trouble: its text may hold internals
				// (a file's path, an OS error), which go to the log only.
				ae.message = serverErrorMessage(m)
			}
			var ce *kv.CompactedError
			if errors.As(err, &ce) {
				ae.extra = map[string]any{"compact_revision": ce.CompactRevision}
			}
			return ae, true
		}
	}
	return nil, false
}

// serverErrorMessage is what a client is told of a 5xx error: its
// meaning, never its text.
func serverErrorMessage(m ErrorMapping) string {
	switch {
	case m.Target == kv.ErrClosed:
		return "the server is shutting down"
	case m.Target == kv.ErrBackendFailed:
		return "the backend failed; the server takes no more writes until it is restarted"
	case m.Status == http.StatusInsufficientStorage:
		return "the backend quota is exceeded (NOSPACE alarm)"
	case m.Status == http.StatusServiceUnavailable:
		return "the server cannot serve this now: it is shutting down, or its backend failed"
	}
	return "internal error"
}

// writeError answers with err in the contract's error format. Errors that
// are the server's (5xx) are logged with the request id and answered
// without internals.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae, ok := h.toAPIError(err)
	if !ok {
		ae = &apiError{status: http.StatusInternalServerError, code: "internal", message: "internal error"}
	}
	if ae.status >= 500 {
		h.log(r).Error().Err(err).Int("status", ae.status).Msg("request failed")
	}
	writeAPIError(w, ae)
}

func writeAPIError(w http.ResponseWriter, ae *apiError) {
	body := map[string]any{"code": ae.code, "message": ae.message}
	for k, v := range ae.extra {
		body[k] = v
	}
	switch ae.status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", "Bearer")
	case http.StatusServiceUnavailable:
		// Shutting down, or a backend that cannot serve now (an etcd
		// cluster without a quorum): come back.
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, ae.status, map[string]any{"error": body})
}

// answerTooLarge says which bound of one answer a read went past, and how
// to ask for less.
func answerTooLarge(e *kv.TooLargeError) *apiError {
	if e.MaxKeys > 0 {
		return &apiError{status: http.StatusBadRequest, code: "invalid_argument",
			message: fmt.Sprintf("a range without a limit matched more than %d keys: give it a limit of at most %d and page through the rest", e.MaxKeys, e.MaxKeys),
			extra:   map[string]any{"max_keys": e.MaxKeys}}
	}
	return &apiError{status: http.StatusBadRequest, code: "invalid_argument",
		message: fmt.Sprintf("the answer would hold more than %d bytes of keys and values (--max-response-bytes): ask for fewer keys with limit, or for keys_only or count_only", e.MaxBytes),
		extra:   map[string]any{"max_response_bytes": e.MaxBytes}}
}
