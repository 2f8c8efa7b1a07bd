package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The codes of the API's errors that callers most often act on; the API
// lists them all (API.md, "Errors").
const (
	CodeKeyNotFound        = "key_not_found"
	CodeLeaseNotFound      = "lease_not_found"
	CodePreconditionFailed = "precondition_failed"
	CodeCompacted          = "compacted"
	CodeUnauthenticated    = "unauthenticated"
	CodePermissionDenied   = "permission_denied"
	CodeLockTimeout        = "lock_timeout"
	CodeNoLeader           = "no_leader"
	CodeStreamNotFound     = "stream_not_found"
	CodeUnavailable        = "unavailable"
)

// Error is an error answer of the API: its status, and the code and
// message of its JSON body, {"error":{"code","message",...}}.
type Error struct {
	Status  int    // the HTTP status
	Code    string // the API's code, such as "key_not_found"; empty if the body was not the API's
	Message string
	// With compacted: the store's compact revision.
	CompactRevision int64
	// With key_not_found and precondition_failed: the store's revision.
	Revision int64
	// With precondition_failed: the key as it is now, if it exists.
	KV *KeyValue
	// Body is the answer's body as the server sent it.
	Body json.RawMessage
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
	}
	return e.Code + ": " + e.Message
}

// Is makes errors.Is(err, ErrCompacted) true for an answer 410
// compacted.
func (e *Error) Is(target error) bool {
	return target == ErrCompacted && e.Code == CodeCompacted
}

// HasCode reports whether err is an error answer with that code.
func HasCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// answerError makes an *Error of an answer whose status is not 2xx.
func answerError(resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode, Body: body}
	var wire struct {
		Error *struct {
			Code            string    `json:"code"`
			Message         string    `json:"message"`
			CompactRevision int64     `json:"compact_revision"`
			Revision        int64     `json:"revision"`
			KV              *KeyValue `json:"kv"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &wire) == nil && wire.Error != nil && wire.Error.Code != "" {
		w := wire.Error
		e.Code, e.Message, e.CompactRevision, e.Revision, e.KV = w.Code, w.Message, w.CompactRevision, w.Revision, w.KV
		return e
	}
	// Not the API's error: a proxy's page, or a server that is not httpkv.
	e.Message = strings.TrimSpace(fmt.Sprintf("%.200s", body))
	if e.Message == "" {
		e.Message = "no body"
	}
	return e
}

// ErrCompacted is what errors.Is finds in the error of a read, a page
// token or a watch that needed history below the compact revision.
var ErrCompacted = errors.New("compacted")

// CompactedError ends a watch whose history is compacted: the server
// no longer holds what it would have to send next. List again, and
// watch from the list's revision + 1.
type CompactedError struct {
	// WatchID names the watcher, on a stream of many (0 on a single watch).
	WatchID int64
	// CompactRevision is the store's compact revision.
	CompactRevision int64
	// Revision is the store's revision when it was reported.
	Revision int64
}

func (e *CompactedError) Error() string {
	who := "the watch"
	if e.WatchID != 0 {
		who = fmt.Sprintf("watch %d", e.WatchID)
	}
	return fmt.Sprintf("compacted: %s needs history below the compact revision %d (the store is at %d); list again and watch from the list's revision", who, e.CompactRevision, e.Revision)
}

func (e *CompactedError) Unwrap() error { return ErrCompacted }

// CanceledError ends a watch the server will not go on with, for
// Reason: "permission denied", "watch deleted"... A server that shuts
// down cancels its watches too ("shutting down"), but the iterators
// resume those by themselves once it is back.
type CanceledError struct {
	WatchID int64 // on a stream of many; 0 on a single watch
	Reason  string
}

func (e *CanceledError) Error() string {
	if e.WatchID != 0 {
		return fmt.Sprintf("canceled: watch %d: %s", e.WatchID, e.Reason)
	}
	return "canceled: " + e.Reason
}
