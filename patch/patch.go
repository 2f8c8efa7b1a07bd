package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/httpkv/httpkv/kv"
)

// MaxOps bounds the operations of a JSON Patch: each may walk or shift
// the whole document.
const MaxOps = 1000

// Kind is the kind of a patch.
type Kind int

const (
	// Merge is a JSON Merge Patch (RFC 7396).
	Merge Kind = iota + 1
	// JSON is a JSON Patch (RFC 6902).
	JSON
)

// Patch is a parsed patch, ready to apply to any number of values.
type Patch struct {
	kind  Kind
	merge []byte
	ops   jsonpatch.Patch
	// maxBytes bounds the result, and what copies may add to it.
	maxBytes int
}

// ErrTooLarge: the patched value would be larger than the bound Parse
// was given. It is a case of kv.ErrPatchFailed.
var ErrTooLarge = kv.Errorf(kv.ErrPatchFailed, "the patched value would be larger than a value may be")

// Parse checks body as a patch of kind; the results of applying it are
// bounded to maxBytes. A body that is no JSON, or no JSON Patch, is an
// ErrInvalidArgument.
func Parse(kind Kind, body []byte, maxBytes int) (*Patch, error) {
	if !json.Valid(body) {
		return nil, kv.Invalidf("the patch is not JSON")
	}
	p := &Patch{kind: kind, maxBytes: maxBytes}
	switch kind {
	case Merge:
		p.merge = body
		return p, nil
	case JSON:
		ops, err := jsonpatch.DecodePatch(body)
		if err != nil {
			return nil, kv.Invalidf("the body is not a JSON Patch, an array of operations (RFC 6902): %v", err)
		}
		if len(ops) > MaxOps {
			return nil, kv.Invalidf("the JSON Patch has %d operations; at most %d are allowed", len(ops), MaxOps)
		}
		for i, op := range ops {
			if op.Kind() == "test" {
				if _, err := op.ValueInterface(); err != nil {
					return nil, kv.Invalidf("operation %d (test) has no value to test against", i)
				}
			}
		}
		p.ops = ops
		return p, nil
	}
	return nil, kv.Invalidf("unknown kind of patch %d", kind)
}

// Apply returns the value the patch makes of value (exists false: the key
// does not exist), as compact JSON. A merge patch applies to a missing
// key as to null; a JSON Patch needs the key (ErrKeyNotFound). It fails
// with ErrPatchFailed when the value is not JSON, a path is missing, a
// test fails, or the result would pass the bound.
func (p *Patch) Apply(key, value []byte, exists bool) ([]byte, error) {
	if !exists && p.kind == JSON {
		return nil, kv.Errorf(kv.ErrKeyNotFound, "the key %q does not exist: a JSON Patch needs a value to apply to (a merge patch creates the key)", key)
	}
	if exists && !json.Valid(value) {
		return nil, kv.Errorf(kv.ErrPatchFailed, "the value of %q is not JSON: only a JSON value can be patched", key)
	}
	var out []byte
	var err error
	if p.kind == Merge {
		out, err = p.applyMerge(value, exists)
	} else {
		opts := jsonpatch.NewApplyOptions()
		opts.AccumulatedCopySizeLimit = int64(p.maxBytes)
		opts.EscapeHTML = false
		out, err = p.ops.ApplyWithOptions(value, opts)
	}
	if err != nil {
		return nil, kv.Errorf(kv.ErrPatchFailed, "the patch does not apply to the value of %q: %s", key, p.describe(err))
	}
	var buf bytes.Buffer
	buf.Grow(len(out))
	if err := json.Compact(&buf, out); err != nil {
		return nil, kv.Errorf(kv.ErrPatchFailed, "the patch of %q made no JSON: %v", key, err)
	}
	if buf.Len() > p.maxBytes {
		return nil, kv.Errorf(ErrTooLarge, "the patched value of %q would be %d bytes, more than the %d a value may have", key, buf.Len(), p.maxBytes)
	}
	return buf.Bytes(), nil
}

// applyMerge applies a merge patch. RFC 7396 merges an object patch into
// the value when it is an object and into {} when it is not (null, a
// missing key); any other patch replaces the value. The library refuses
// null as the value it merges into, so {} stands for it.
func (p *Patch) applyMerge(value []byte, exists bool) ([]byte, error) {
	if !exists || bytes.Equal(bytes.TrimSpace(value), []byte("null")) {
		value = []byte("{}")
	}
	out, err := jsonpatch.MergePatch(value, p.merge)
	if err != nil {
		return nil, err
	}
	// The library escapes <, > and & as HTML would want; the value keeps
	// them as they were given.
	return unescapeHTML(out), nil
}

// describe says why the library refused a patch, without its capitals
// and in our terms where we have them.
func (p *Patch) describe(err error) string {
	var size *jsonpatch.AccumulatedCopySizeError
	switch {
	case errors.As(err, &size):
		return fmt.Sprintf("its copies would add more than the %d bytes a value may have", p.maxBytes)
	case errors.Is(err, jsonpatch.ErrTestFailed):
		return strings.TrimSuffix(err.Error(), ": "+jsonpatch.ErrTestFailed.Error())
	case errors.Is(err, jsonpatch.ErrMissing):
		return "a path is missing: " + strings.TrimSuffix(err.Error(), ": "+jsonpatch.ErrMissing.Error())
	}
	return err.Error()
}

// unescapeHTML undoes the \u003c, \u003e and \u0026 escapes of JSON text,
// leaving every other escape (and an escaped backslash before "u003c")
// as it is.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 == len(b) {
			out = append(out, c)
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c":
				out = append(out, '<')
				i += 5
				continue
			case "003e":
				out = append(out, '>')
				i += 5
				continue
			case "0026":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		// Any other escape: copy it whole, so that its second byte is
		// never read as the start of one.
		out = append(out, c, b[i+1])
		i++
	}
	return out
}
