package wire

import (
	"fmt"

	"github.com/httpkv/httpkv/kv"
)

// Error is a request the wire refuses: malformed JSON, a field or a
// parameter out of range. It is a kv.Coded error, so the API answers it
// with the same table as the domain's errors: invalid_argument (400), or
// internal (500) for a parameter a handler reads but its route does not
// declare, a bug of the handler's.
type Error struct {
	Code    kv.Code
	Message string
}

// Error is the message, written for the client.
func (e *Error) Error() string { return e.Message }

// ErrorCode is e's code, for kv.CodeOf.
func (e *Error) ErrorCode() kv.Code { return e.Code }

// badRequest reports malformed input.
func badRequest(format string, args ...any) *Error {
	return &Error{Code: kv.CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}
