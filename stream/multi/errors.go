package multi

import (
	"errors"
	"fmt"
)

// The engine's refusals, in its own terms: httpapi gives each its code,
// and the header, parameter or flag that helps (httpapi/stream_errors.go).
var (
	// ErrStreamNotFound: no such stream, or it is another owner's.
	ErrStreamNotFound = errors.New("no such watch stream: it was deleted, or dropped after a while without a connection, or is another user's")
	// ErrWatchNotFound: no such watcher on the stream, or it has ended.
	ErrWatchNotFound = errors.New("no such watch on this stream, or it has ended")
	// ErrBusy: a change of a shared stream's record lost every
	// compare-and-swap to changes made at the same time.
	ErrBusy = fmt.Errorf("the streams changed %d times while this change was made; retry", changeRetries)
	// ErrGatewayWatchers: a watcher of a shared stream this gateway
	// cannot start, its bound for all watchers spent; it ends canceled,
	// with the Authority's Reason for it.
	ErrGatewayWatchers = errors.New("too many watchers on this gateway")
	// ErrCursorNeeded: a stream read before is read again without the
	// cursor of the last message received.
	ErrCursorNeeded = errors.New("this stream was read before: resume it after the last message received")
)

// Limit names the bound that refused a change.
type Limit int

const (
	// LimitStreams: Config.MaxStreams, of this server.
	LimitStreams Limit = iota + 1
	// LimitDeploymentStreams: Config.MaxStreams, counted in the records
	// of the deployment.
	LimitDeploymentStreams
	// LimitStreamsPerOwner: Config.MaxStreamsPerUser.
	LimitStreamsPerOwner
	// LimitWatchers: Config.MaxWatchers, of one stream.
	LimitWatchers
	// LimitRecordBytes: the size of a shared stream's record.
	LimitRecordBytes
)

// LimitError is a change refused by a bound: Limit, at Max.
type LimitError struct {
	Limit Limit
	Max   int
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitStreams:
		return fmt.Sprintf("the server has %d watch streams, its most; retry later", e.Max)
	case LimitDeploymentStreams:
		return fmt.Sprintf("the deployment has %d watch streams, its most; retry later", e.Max)
	case LimitStreamsPerOwner:
		return fmt.Sprintf("at most %d watch streams per owner", e.Max)
	case LimitWatchers:
		return fmt.Sprintf("a stream has at most %d watchers", e.Max)
	}
	return fmt.Sprintf("a stream's watchers take at most %d bytes to record: delete some, or make another stream", e.Max)
}

// CursorProblem is what is wrong with a cursor.
type CursorProblem int

const (
	// CursorMalformed: not a cursor of any stream.
	CursorMalformed CursorProblem = iota + 1
	// CursorTooLong: longer than MaxCursorText.
	CursorTooLong
	// CursorUnknown: not the cursor of a message of this stream.
	CursorUnknown
	// CursorUnknownWatchers: it names watchers the stream never had.
	CursorUnknownWatchers
)

// CursorError is a cursor a stream cannot resume after.
type CursorError struct {
	Problem CursorProblem
	// Text is the cursor as given (CursorMalformed, CursorTooLong);
	// Seq its sequence number (CursorUnknown).
	Text string
	Seq  int64
}

func (e *CursorError) Error() string {
	switch e.Problem {
	case CursorMalformed:
		return fmt.Sprintf("%.64q is not the cursor of a message of a stream", e.Text)
	case CursorTooLong:
		return fmt.Sprintf("a cursor of %d bytes, more than any of a stream (%d)", len(e.Text), MaxCursorText)
	case CursorUnknown:
		return fmt.Sprintf("%d is not the cursor of a message of this stream", e.Seq)
	}
	return "the cursor names watchers this stream never had"
}
