package httpapi

import (
	"io"
	"net/http"

	"github.com/httpkv/httpkv/wire"
)

// decodeJSON reads a request body into v, strictly (wire.Decode).
func decodeJSON(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return wire.Decode(body, v)
}

// readBody reads a request's body whole. A body with a Content-Length
// (which limitBody checked and counted in flight) is read into one buffer
// of that size, so that what it holds is what was counted, not the
// doubling growth of io.ReadAll.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, bodyError(err)
		}
		return b, nil
	}
	b := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(r.Body, b); err != nil {
		return nil, bodyError(err)
	}
	return b, nil
}
