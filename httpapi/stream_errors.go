package httpapi

import (
	"errors"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream/multi"
)

// streamError is the API's answer to an error of the stream engine
// (stream/multi), or nil for any other: its code, and its message with
// the header, parameter or flag that helps, which the engine does not
// know.
func streamError(err error) *apiError {
	var le *multi.LimitError
	var ce *multi.CursorError
	switch {
	case errors.Is(err, multi.ErrStreamNotFound):
		return errorf(codeStreamNotFound, "%s", multi.ErrStreamNotFound)
	case errors.Is(err, multi.ErrWatchNotFound):
		return errorf(codeWatchNotFound, "%s", multi.ErrWatchNotFound)
	case errors.Is(err, multi.ErrBusy):
		return errorf(kv.CodeUnavailable, "%s", multi.ErrBusy)
	case errors.Is(err, multi.ErrCursorNeeded):
		return badRequest("this stream was read before: reconnect with Last-Event-ID (or last_event_id), the id of the last message received")
	case errors.As(err, &le):
		return limitError(le)
	case errors.As(err, &ce):
		return cursorError(ce)
	}
	return nil
}

// limitError answers a bound of the streams: 429, naming its flag.
func limitError(e *multi.LimitError) *apiError {
	switch e.Limit {
	case multi.LimitStreams:
		return errorf(kv.CodeTooManyRequests, "the server has %d watch streams, its most (--max-watch-streams); retry later", e.Max)
	case multi.LimitDeploymentStreams:
		return errorf(kv.CodeTooManyRequests, "the deployment has %d watch streams, its most (--max-watch-streams); retry later", e.Max)
	case multi.LimitStreamsPerOwner:
		return errorf(kv.CodeTooManyRequests, "at most %d watch streams per user, or per client address with auth off (--max-watch-streams-per-user): delete one, or add watches to one", e.Max)
	case multi.LimitWatchers:
		return errorf(kv.CodeTooManyRequests, "a stream has at most %d watchers (--max-watchers-per-stream)", e.Max)
	}
	return errorf(kv.CodeTooManyRequests, "%s", e)
}

// cursorError answers a cursor a stream cannot resume after: 400, in
// terms of Last-Event-ID.
func cursorError(e *multi.CursorError) *apiError {
	switch e.Problem {
	case multi.CursorMalformed:
		s := e.Text
		if len(s) > 64 {
			s = s[:64] + "..."
		}
		return badRequest("Last-Event-ID must be the id of a message of this stream, not %q", s)
	case multi.CursorTooLong:
		return badRequest("Last-Event-ID is %d bytes, more than any id of a stream (%d)", len(e.Text), multi.MaxCursorText)
	case multi.CursorUnknown:
		return badRequest("Last-Event-ID %d is not the id of a message of this stream", e.Seq)
	}
	return badRequest("Last-Event-ID names watchers this stream never had")
}
