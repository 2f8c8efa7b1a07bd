package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/httpkv/httpkv/internal/suggest"
)

// Decode reads a request body into v, strictly: unknown fields and
// trailing data are errors, so a typo does not pass for a default, and so
// are strings that are not UTF-8, which encoding/json would change, and a
// field given twice (CheckText). Every error is an *Error.
func Decode(body []byte, v any) error {
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
				return badRequest("unknown field %q%s: the object there takes %s", path, DidYouMean(name, known), strings.Join(known, ", "))
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
	return CheckText(body)
}

// Twin returns the bytes of the field called name, given as the UTF-8
// string text or as its base64 twin b64 (name_base64); set is false when
// neither was given, and giving both is an error.
func Twin(name string, text, b64 *string) (b []byte, set bool, err error) {
	switch {
	case text != nil && b64 != nil:
		return nil, false, badRequest("give %s or %s_base64, not both", name, name)
	case b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, false, badRequest("%s_base64 is not valid base64", name)
		}
		return b, true, nil
	case text != nil:
		return []byte(*text), true, nil
	}
	return nil, false, nil
}

// RequireKey returns a key field, as Twin does, that must be given and
// not be empty.
func RequireKey(name string, text, b64 *string) ([]byte, error) {
	b, set, err := Twin(name, text, b64)
	if err != nil {
		return nil, err
	}
	if !set || len(b) == 0 {
		return nil, badRequest("%s is required and must not be empty", name)
	}
	return b, nil
}

// DidYouMean suggests the known name nearest to name, if one is near
// enough to be a slip (suggest.Nearest), as a parenthesis to add to a
// message; "" if none is.
func DidYouMean(name string, known []string) string {
	best := suggest.Nearest(name, known)
	if best == "" {
		return ""
	}
	return ` (did you mean "` + best + `"?)`
}
