package patch

import (
	"errors"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    Kind
		patch   string
		value   string
		missing bool
		want    string
		err     error
		says    string
	}{
		{name: "merge into object", kind: Merge, patch: `{"b":2,"a":null}`, value: `{"a": 1, "c": {"d": 3}}`, want: `{"c":{"d":3},"b":2}`},
		{name: "merge nested", kind: Merge, patch: `{"c":{"e":4}}`, value: `{"c":{"d":3}}`, want: `{"c":{"d":3,"e":4}}`},
		{name: "merge into missing key", kind: Merge, patch: `{"a":1,"b":null}`, missing: true, want: `{"a":1}`},
		{name: "merge into null", kind: Merge, patch: `{"a":1}`, value: `null`, want: `{"a":1}`},
		{name: "merge into a number", kind: Merge, patch: `{"a":1}`, value: `5`, want: `{"a":1}`},
		{name: "merge a non-object replaces", kind: Merge, patch: `[1, 2]`, value: `{"a":1}`, want: `[1,2]`},
		{name: "merge keeps html characters", kind: Merge, patch: `{"b":"<&>"}`, value: `{"a":"x\u003cy"}`, want: `{"a":"x<y","b":"<&>"}`},
		{name: "merge keeps an escaped backslash", kind: Merge, patch: `{"b":"\\\\u003c"}`, value: `{}`, want: `{"b":"\\\\u003c"}`},
		{name: "merge into a value that is not JSON", kind: Merge, patch: `{"a":1}`, value: `not json`, err: kv.ErrPatchFailed, says: "not JSON"},
		{name: "json patch", kind: JSON, patch: `[{"op":"add","path":"/b","value":[1]},{"op":"replace","path":"/a","value":"<x>"}]`, value: `{"a":1}`, want: `{"a":"<x>","b":[1]}`},
		{name: "json patch test holds", kind: JSON, patch: `[{"op":"test","path":"/a","value":1},{"op":"remove","path":"/a"}]`, value: `{"a":1,"b":2}`, want: `{"b":2}`},
		{name: "json patch test fails", kind: JSON, patch: `[{"op":"test","path":"/a","value":2}]`, value: `{"a":1}`, err: kv.ErrPatchFailed, says: "testing value /a failed"},
		{name: "json patch path missing", kind: JSON, patch: `[{"op":"replace","path":"/x/y","value":2}]`, value: `{"a":1}`, err: kv.ErrPatchFailed, says: "missing"},
		{name: "json patch on missing key", kind: JSON, patch: `[{"op":"add","path":"/a","value":1}]`, missing: true, err: kv.ErrKeyNotFound},
		{name: "json patch on a value that is not JSON", kind: JSON, patch: `[]`, value: `{`, err: kv.ErrPatchFailed, says: "not JSON"},
		{name: "result over the bound", kind: Merge, patch: `{"big":"` + strings.Repeat("x", 200) + `"}`, value: `{}`, err: ErrTooLarge, says: "more than the 128 a value may have"},
		{name: "copies over the bound", kind: JSON, patch: `[{"op":"copy","from":"/a","path":"/b"},{"op":"copy","from":"/a","path":"/c"},{"op":"copy","from":"/a","path":"/d"}]`,
			value: `{"a":"` + strings.Repeat("x", 60) + `"}`, err: kv.ErrPatchFailed, says: "copies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.kind, []byte(tc.patch), 128)
			if err != nil {
				t.Fatalf("Parse(%s) = %v", tc.patch, err)
			}
			got, err := p.Apply([]byte("k"), []byte(tc.value), !tc.missing)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("Apply(%s) to %s = %q, %v; want %v saying %q", tc.patch, tc.value, got, err, tc.err, tc.says)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("Apply(%s) to %s = %s, %v; want %s", tc.patch, tc.value, got, err, tc.want)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	many := "[" + strings.Repeat(`{"op":"remove","path":"/a"},`, MaxOps) + `{"op":"remove","path":"/a"}]`
	for _, tc := range []struct {
		name string
		kind Kind
		body string
		says string
	}{
		{"not JSON", Merge, `{"a":`, "not JSON"},
		{"json patch not JSON", JSON, `[{`, "not JSON"},
		{"json patch not an array", JSON, `{"op":"add"}`, "JSON Patch"},
		{"unknown op", JSON, `[{"op":"frobnicate","path":"/a"}]`, "JSON Patch"},
		{"no path", JSON, `[{"op":"remove"}]`, "JSON Patch"},
		{"test without value", JSON, `[{"op":"test","path":"/a"}]`, "no value"},
		{"too many operations", JSON, many, "at most 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.kind, []byte(tc.body), 1<<20)
			if !errors.Is(err, kv.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Parse(%.40s) = %v, want an invalid argument saying %q", tc.body, err, tc.says)
			}
		})
	}
}
