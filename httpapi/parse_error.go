package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/httpkv/httpkv/kv"
)

// netHTTPErrorHeaders is what Go's HTTP/1 server writes after the status
// line of the answers it gives itself, before any handler runs, to a
// request it cannot read (net/http's conn.serve). No answer of a handler
// has it: a handler's headers are sorted, so Connection never follows
// Content-Type, and every one carries Date and X-Content-Type-Options.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// ParseErrorAnswer turns an answer Go's HTTP/1 server writes itself to a
// request it cannot read into the contract's JSON error, with the same
// status: a malformed percent escape or a control byte in the path (400),
// no Host (400), headers over the limit (431), an unknown transfer coding
// (501) or HTTP version (505). net/http writes such an answer whole, in
// one Write on the connection, with text/plain "400 Bad Request" as its
// body, and has no hook to change it; a connection can pass what it is
// asked to write through this. ok is false, and b is to be written as it
// is, for anything else.
func ParseErrorAnswer(b []byte) (answer []byte, ok bool) {
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(b, []byte(proto)) || len(b) < len(proto)+3 || b[len(proto)] != '4' && b[len(proto)] != '5' {
		return nil, false
	}
	end := bytes.IndexByte(b[:min(len(b), 256)], '\r')
	if end < 0 || !bytes.HasPrefix(b[end:], []byte(netHTTPErrorHeaders)) {
		return nil, false
	}
	// The answer is exactly what net/http writes, to its last byte: its
	// body repeats the status line, or names the transfer coding it
	// refuses. A handler's body that merely starts like one is left be.
	body := b[end+len(netHTTPErrorHeaders):]
	if string(body) != string(b[len(proto):end]) && string(body) != "Unsupported transfer encoding" {
		return nil, false
	}
	status, err := strconv.Atoi(string(b[len(proto) : len(proto)+3]))
	if err != nil || http.StatusText(status) == "" {
		return nil, false
	}
	// The status line may say why after a colon: "400 Bad Request:
	// missing required Host header".
	line := b[len(proto):end]
	var message string
	if i := bytes.Index(line, []byte(": ")); i >= 0 {
		message = string(line[i+2:])
	}
	code := kv.CodeInvalidArgument
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		code, message = codeRequestTooLarge, "the request's headers are larger than the server takes (1 MiB): send less"
	case http.StatusNotImplemented:
		message = "the request's Transfer-Encoding is not one the server knows: send chunked, or a Content-Length"
	case http.StatusBadRequest:
		if message == "" {
			message = "the request cannot be read: a malformed percent escape (such as %ZZ) or a control byte in its path, or a malformed request line or header; escape a literal % in a key as %25"
		}
	}
	if message == "" {
		message = http.StatusText(status)
	}
	body, _ = json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": message}})
	body = append(body, '\n')
	out := make([]byte, 0, 200+len(body))
	out = append(out, proto...)
	out = strconv.AppendInt(out, int64(status), 10)
	out = append(out, ' ')
	out = append(out, http.StatusText(status)...)
	out = append(out, "\r\nConnection: close\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, "\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n\r\n"...)
	return append(out, body...), true
}
