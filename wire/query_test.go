package wire

import (
	"bytes"
	"fmt"
	"net/url"
	"testing"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// queryOf reads raw as a route would that accepts the selectors, the
// range options, b and n, and every name raw holds: these tests are about
// values (httpapi's TestUnknownQueryParam is about names).
func queryOf(raw string) *Query {
	accepted := ParamsOf(SelectorParams, RangeOptionParams, Params{"b", "n"})
	v, _ := url.ParseQuery(raw)
	for name := range v {
		accepted = append(accepted, name)
	}
	return NewQuery(v, accepted)
}

func TestQueryBoolean(t *testing.T) {
	tests := []struct {
		raw     string
		want    bool
		wantErr bool
	}{
		{"", false, false},
		{"b=true", true, false},
		{"b=1", true, false},
		{"b=false", false, false},
		{"b=0", false, false},
		{"b=", false, false},
		{"b=TRUE", true, false},
		{"b=yes", false, true},
		{"b=2", false, true},
		{"b=tru", false, true},
		{"b=%20true", false, true},
		{"b=-1", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			q := queryOf(tt.raw)
			got := q.Bool("b")
			if got != tt.want || (q.Err() != nil) != tt.wantErr {
				t.Errorf("boolean(b) of %q = %v, err %v; want %v, error %v", tt.raw, got, q.Err(), tt.want, tt.wantErr)
			}
		})
	}
}

func TestQueryInt64(t *testing.T) {
	tests := []struct {
		raw     string
		want    int64
		wantErr bool
	}{
		{"", 7, false},
		{"n=", 7, false},
		{"n=0", 0, false},
		{"n=42", 42, false},
		{"n=9223372036854775807", 1<<63 - 1, false},
		{"n=9223372036854775808", 7, true},
		{"n=-1", 7, true},
		{"n=1.5", 7, true},
		{"n=abc", 7, true},
		{"n=0x10", 7, true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			q := queryOf(tt.raw)
			got := q.Int64("n", 7)
			if got != tt.want || (q.Err() != nil) != tt.wantErr {
				t.Errorf("int64(n, 7) of %q = %d, err %v; want %d, error %v", tt.raw, got, q.Err(), tt.want, tt.wantErr)
			}
		})
	}
}

func TestQuerySelector(t *testing.T) {
	all := keyrange.Range{Key: []byte{0}, End: []byte{0}}
	tests := []struct {
		raw        string
		requireKey bool
		want       keyrange.Range
		wantErr    bool
	}{
		{"", false, all, false},
		{"", true, keyrange.Range{}, true},
		{"key=a", false, keyrange.Range{Key: []byte("a")}, false},
		{"key=a&prefix=true", false, keyrange.Range{Key: []byte("a"), End: []byte("b")}, false},
		{"key=a&prefix=1", false, keyrange.Range{Key: []byte("a"), End: []byte("b")}, false},
		{"key=a&prefix=false", false, keyrange.Range{Key: []byte("a")}, false},
		{"key=a%FF&prefix=true", false, keyrange.Range{Key: []byte("a\xff"), End: []byte("b")}, false},
		{"key=%FF%FF&prefix=true", false, keyrange.Range{Key: []byte("\xff\xff"), End: []byte{0}}, false},
		{"key=&prefix=true", false, all, false},
		{"prefix=true", false, all, false},
		{"key=a&from_key=true", false, keyrange.Range{Key: []byte("a"), End: []byte{0}}, false},
		{"key=a&range_end=c", false, keyrange.Range{Key: []byte("a"), End: []byte("c")}, false},
		{"key_base64=YQ%3D%3D&range_end_base64=Yw==", false, keyrange.Range{Key: []byte("a"), End: []byte("c")}, false},
		{"key=a&range_end=", false, keyrange.Range{}, true},
		{"key=", false, keyrange.Range{}, true},
		{"key=a&prefix=true&from_key=true", false, keyrange.Range{}, true},
		{"key=a&prefix=true&range_end=c", false, keyrange.Range{}, true},
		{"key=a&from_key=1&range_end=c", false, keyrange.Range{}, true},
		{"range_end=c", false, keyrange.Range{}, true},
		{"from_key=true", false, keyrange.Range{}, true},
		{"key=a&key_base64=YQ==", false, keyrange.Range{}, true},
		{"key_base64=!!", false, keyrange.Range{}, true},
		{"key=a&prefix=yes", false, keyrange.Range{}, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/require=%v", tt.raw, tt.requireKey), func(t *testing.T) {
			q := queryOf(tt.raw)
			got := q.Selector(tt.requireKey)
			if tt.wantErr {
				if code, _, _ := kv.CodeOf(q.Err()); code != kv.CodeInvalidArgument {
					t.Errorf("selector(%v) of %q = %q, err %v; want invalid_argument", tt.requireKey, tt.raw, got, q.Err())
				}
				return
			}
			if q.Err() != nil || !bytes.Equal(got.Key, tt.want.Key) || !bytes.Equal(got.End, tt.want.End) ||
				(got.End == nil) != (tt.want.End == nil) {
				t.Errorf("selector(%v) of %q = %q, err %v; want %q", tt.requireKey, tt.raw, got, q.Err(), tt.want)
			}
		})
	}
}

func TestQueryRangeOptions(t *testing.T) {
	tests := []struct {
		raw     string
		want    kv.RangeOptions
		wantErr bool
	}{
		{"", kv.RangeOptions{}, false},
		{"revision=5&keys_only=1&count_only=true", kv.RangeOptions{Revision: 5, KeysOnly: true, CountOnly: true}, false},
		{"sort_target=mod&sort_order=descend", kv.RangeOptions{SortTarget: kv.SortByMod, SortOrder: kv.SortDescend}, false},
		{"sort_target=value&sort_order=ascend", kv.RangeOptions{SortTarget: kv.SortByValue, SortOrder: kv.SortAscend}, false},
		{"min_mod_revision=2&max_mod_revision=9&min_create_revision=3&max_create_revision=8",
			kv.RangeOptions{MinModRevision: 2, MaxModRevision: 9, MinCreateRevision: 3, MaxCreateRevision: 8}, false},
		{"sort_target=size", kv.RangeOptions{}, true},
		{"sort_order=up", kv.RangeOptions{}, true},
		{"revision=-1", kv.RangeOptions{}, true},
		{"keys_only=maybe", kv.RangeOptions{}, true},
		{"min_mod_revision=x", kv.RangeOptions{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			q := queryOf(tt.raw)
			got := q.RangeOptions()
			if (q.Err() != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
				t.Errorf("rangeOptions() of %q = %+v, err %v; want %+v, error %v", tt.raw, got, q.Err(), tt.want, tt.wantErr)
			}
		})
	}
}
