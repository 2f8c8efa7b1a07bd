package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
)

// decodeJSON reads a request body into v, strictly: unknown fields and
// trailing data are errors, so a typo does not pass for a default, and so
// are strings that are not UTF-8, which encoding/json would change.
func decodeJSON(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeJSONBytes(body, v)
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

func decodeJSONBytes(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			return badRequest("request body is empty; a JSON object is expected")
		case errors.As(err, &se):
			return badRequest("malformed JSON at byte %d: %v", se.Offset, err)
		case errors.As(err, &te) && te.Field == "":
			return badRequest("the request body must be a JSON object, not %s", te.Value)
		case errors.As(err, &te):
			return badRequest("field %q must be %v, not %s", te.Field, te.Type, te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			if path, known, ok := unknownField(body, v); ok {
				slices.Sort(known)
				name := path[strings.LastIndexAny(path, ".]")+1:]
				return badRequest("unknown field %q%s: the object there takes %s", path, didYouMean(name, known), strings.Join(known, ", "))
			}
			return badRequest("%s", strings.TrimPrefix(err.Error(), "json: "))
		}
		return badRequest("malformed JSON: %v", err)
	}
	// Every body is an object: encoding/json takes null for an empty one
	// (a txn that does nothing, a lease with the default TTL).
	if bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("null")) {
		return badRequest("the request body must be a JSON object, not null")
	}
	// Anything but whitespace after the value is an error; dec.More alone
	// would let a stray ']' or '}' through.
	if rest := body[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return badRequest("malformed JSON: data after the object")
	}
	if aerr := jsonTextError(body); aerr != nil {
		return aerr
	}
	return nil
}

// twin is a key or value given as a UTF-8 string or as its base64 twin.
type twin struct {
	s   *string
	b64 *string
}

// get returns the bytes of the field called name; set is false when
// neither form was given.
func (t twin) get(name string) (b []byte, set bool, err error) {
	switch {
	case t.s != nil && t.b64 != nil:
		return nil, false, badRequest("give %s or %s_base64, not both", name, name)
	case t.b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*t.b64)
		if err != nil {
			return nil, false, badRequest("%s_base64 is not valid base64", name)
		}
		return b, true, nil
	case t.s != nil:
		return []byte(*t.s), true, nil
	}
	return nil, false, nil
}

// requireKey returns a key field that must be given and not be empty.
func requireKey(t twin, name string) ([]byte, error) {
	b, set, err := t.get(name)
	if err != nil {
		return nil, err
	}
	if !set || len(b) == 0 {
		return nil, badRequest("%s is required and must not be empty", name)
	}
	return b, nil
}
