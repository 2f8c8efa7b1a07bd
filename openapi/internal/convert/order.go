package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// streamsFirst returns the JSON document b with "text/event-stream" first
// in every object that has it: the media types of a content map.
// encoding/json writes map keys sorted, which would put
// application/x-ndjson first, while generators read the first media type
// of an answer as its kind: a watch listed as NDJSON first makes no
// streaming client.
func streamsFirst(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return nil, fmt.Errorf("reordering the document: %w", err)
	}
	var out bytes.Buffer
	if err := encodeOrdered(&out, v); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// member is one name and value of a JSON object, in the order read.
type member struct {
	name  string
	value any
}

// object is a JSON object that keeps its members' order.
type object []member

// decodeOrdered reads one JSON value: an object, a []any, or a scalar
// as encoding/json's Token gives it (json.Number for numbers).
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch delim {
	case '{':
		var o object
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{name.(string), v})
		}
		if i := slices.IndexFunc(o, func(m member) bool { return m.name == mimeStream }); i > 0 {
			m := o[i]
			copy(o[1:i+1], o[:i])
			o[0] = m
		}
		_, err := dec.Token() // }
		return o, err
	case '[':
		a := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ]
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", delim)
}

// encodeOrdered writes v compactly, as encoding/json would but in the
// order of its objects' members.
func encodeOrdered(w *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case object:
		w.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := encodeOrdered(w, m.name); err != nil {
				return err
			}
			w.WriteByte(':')
			if err := encodeOrdered(w, m.value); err != nil {
				return err
			}
		}
		w.WriteByte('}')
	case []any:
		w.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := encodeOrdered(w, e); err != nil {
				return err
			}
		}
		w.WriteByte(']')
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		w.Write(b)
	}
	return nil
}
