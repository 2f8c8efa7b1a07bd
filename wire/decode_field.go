package wire

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// unknownField finds where body holds a field that v's type does not
// have, as a path (success[0].putt), with the known fields at that place:
// encoding/json names the field but not where it is, and "putt" means
// little in a txn of twenty ops. ok is false if none is found.
func unknownField(body []byte, v any) (path string, known []string, ok bool) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return "", nil, false
	}
	return walkFields(doc, reflect.TypeOf(v), "")
}

func walkFields(doc any, t reflect.Type, path string) (string, []string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch d := doc.(type) {
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return "", nil, false
		}
		for i, e := range d {
			if p, k, ok := walkFields(e, t.Elem(), path+"["+strconv.Itoa(i)+"]"); ok {
				return p, k, true
			}
		}
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return "", nil, false
		}
		fields := jsonFieldsOf(t)
		var known []string
		for name := range fields {
			known = append(known, name)
		}
		names := make([]string, 0, len(d))
		for name := range d {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			e := d[name]
			f, ok := fields[name]
			if !ok {
				// encoding/json matches names case-insensitively too.
				for n, ff := range fields {
					if strings.EqualFold(n, name) {
						f, ok = ff, true
					}
				}
			}
			sub := name
			if path != "" {
				sub = path + "." + name
			}
			if !ok {
				return sub, known, true
			}
			if p, k, ok := walkFields(e, f.Type, sub); ok {
				return p, k, true
			}
		}
	}
	return "", nil, false
}

// jsonFieldsOf maps the JSON names of t's fields to them.
func jsonFieldsOf(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			// encoding/json promotes an embedded struct's fields.
			maps.Copy(out, jsonFieldsOf(f.Type))
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}
