package tests

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestListSelectors covers every range selector of GET /v1/kv and the
// errors of its parameters.
func TestListSelectors(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// 1 on a fresh store; a gateway's cluster has taken one more (its
	// deployment's marker) before the test begins.
	base := s.Status(t).Revision
	all := []string{"a", "a/1", "a/2", "ab", "b", "c", "c\xff"}
	for _, k := range all {
		s.Put(t, k, "v")
	}
	wantRev := base + int64(len(all))
	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{"no selector", "", all},
		{"key alone", "key=a", []string{"a"}},
		{"key alone missing", "key=zz", nil},
		{"key_base64 alone", "key_base64=YQ%3D%3D", []string{"a"}},
		{"range_end", "key=a&range_end=b", []string{"a", "a/1", "a/2", "ab"}},
		{"range_end_base64", "key=c&range_end_base64=Y%2F8%3D", []string{"c"}}, // [c, "c\xff")
		{"prefix", "key=a/&prefix=true", []string{"a/1", "a/2"}},
		{"prefix of a key", "key=a&prefix=1", []string{"a", "a/1", "a/2", "ab"}},
		{"prefix of 0xff", "key_base64=Y%2F8%3D&prefix=true", []string{"c\xff"}},
		{"empty prefix", "key=&prefix=true", all},
		{"prefix without key", "prefix=true", all},
		{"from_key", "key=ab&from_key=true", []string{"ab", "b", "c", "c\xff"}},
		{"from_key false is key alone", "key=ab&from_key=false", []string{"ab"}},
		{"range_end below key", "key=b&range_end=a", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l client.ListResponse
			r := s.Do(t, "GET", "/v1/kv?"+tt.query, nil).Ok(t, http.StatusOK, &l)
			if got := e2e.ListKeys(l); !slices.Equal(got, tt.want) || l.Count != int64(len(tt.want)) || l.More {
				t.Errorf("%s = keys %q count %d more %v, want %q count %d", r.Req, got, l.Count, l.More, tt.want, len(tt.want))
			}
			if l.Header.Revision != wantRev {
				t.Errorf("%s: header.revision %d, want %d", r.Req, l.Header.Revision, wantRev)
			}
		})
	}

	for _, tt := range []struct{ name, query string }{
		{"range_end without key", "range_end=b"},
		{"from_key without key", "from_key=true"},
		{"two selectors", "key=a&prefix=true&range_end=b"},
		{"prefix and from_key", "key=a&prefix=true&from_key=true"},
		{"empty key", "key="},
		{"empty range_end", "key=a&range_end="},
		{"key and key_base64", "key=a&key_base64=YQ%3D%3D"},
		{"bad base64", "key_base64=%21%21"},
		{"prefix not a boolean", "key=a&prefix=yes"},
		{"sort_target unknown", "sort_target=size"},
		{"sort_order unknown", "sort_order=up"},
		{"limit zero", "limit=0"},
		{"limit above max", "limit=10001"},
		{"limit negative", "limit=-1"},
		{"limit not a number", "limit=ten"},
		{"revision not a number", "revision=r"},
		{"keys_only not a boolean", "keys_only=2"},
		{"min_mod_revision negative", "min_mod_revision=-3"},
		{"page_token garbage", "page_token=%21%21"},
		{"page_token not a token", "page_token=AAAA"},
	} {
		t.Run("error/"+tt.name, func(t *testing.T) {
			s.Do(t, "GET", "/v1/kv?"+tt.query, nil).WantError(t, http.StatusBadRequest, "invalid_argument")
		})
	}
}

// TestListLimit: the default limit is 1000, the largest 10000.
func TestListLimit(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	const n = 1001
	for start := 0; start < n; start += 128 {
		var ops []string
		for i := start; i < min(start+128, n); i++ {
			ops = append(ops, fmt.Sprintf(`{"put":{"key":"k%04d","value":"v"}}`, i))
		}
		s.Txn(t, `{"success":[`+strings.Join(ops, ",")+`]}`).Want(t, http.StatusOK)
	}
	tests := []struct {
		query string
		n     int
		more  bool
	}{
		{"", 1000, true},
		{"limit=10000", n, false},
		{"limit=1001", n, false},
		{"limit=1000", 1000, true},
		{"limit=1", 1, true},
		{"limit=5&sort_order=descend", 5, true},
	}
	for _, tt := range tests {
		var l client.ListResponse
		r := s.Do(t, "GET", "/v1/kv?"+tt.query, nil).Ok(t, http.StatusOK, &l)
		if len(l.Kvs) != tt.n || l.More != tt.more || l.Count != n {
			t.Errorf("%s = %d kvs, more %v, count %d; want %d, %v, %d", r.Req, len(l.Kvs), l.More, l.Count, tt.n, tt.more, n)
		}
		if wantToken := tt.more && !strings.Contains(tt.query, "descend"); (e2e.Deref(l.NextPageToken) != "") != wantToken {
			t.Errorf("%s: next_page_token %q, want one: %v", r.Req, e2e.Deref(l.NextPageToken), wantToken)
		}
	}
	var l client.ListResponse
	s.Do(t, "GET", "/v1/kv", nil).Ok(t, http.StatusOK, &l)
	var rest client.ListResponse
	s.Do(t, "GET", "/v1/kv?page_token="+e2e.Deref(l.NextPageToken), nil).Ok(t, http.StatusOK, &rest)
	if got := e2e.ListKeys(rest); len(got) != 1 || got[0] != "k1000" || rest.More || e2e.Deref(rest.NextPageToken) != "" {
		t.Errorf("the second page = %q, more %v, token %q; want [k1000] and the end", got, rest.More, e2e.Deref(rest.NextPageToken))
	}
}

// TestListPagination: next_page_token pins every following page to the
// first page's revision, across writes, until the compact revision passes
// it.
func TestListPagination(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	orig := make(map[string]client.KeyValue)
	for i := range 10 {
		s.Put(t, fmt.Sprintf("p/%02d", i), fmt.Sprintf("v%d", i))
	}
	s.Put(t, "q", "outside the range")
	var first client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=p/&prefix=true&limit=3", nil).Ok(t, http.StatusOK, &first)
	rev0 := first.Header.Revision
	if len(first.Kvs) != 3 || !first.More || first.Count != 10 || e2e.Deref(first.NextPageToken) == "" {
		t.Fatalf("first page = %d kvs, more %v, count %d, token %q; want 3, true, 10, a token", len(first.Kvs), first.More, first.Count, e2e.Deref(first.NextPageToken))
	}
	var snapshot client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=p/&prefix=true", nil).Ok(t, http.StatusOK, &snapshot)
	for _, kv := range snapshot.Kvs {
		orig[e2e.KeyOf(&kv)] = kv
	}

	// Change the range between pages: a new key, a changed one, a deleted
	// one, all after the first page.
	s.Put(t, "p/05x", "new")
	s.Put(t, "p/07", "changed")
	s.Do(t, "DELETE", "/v1/kv/p/08", nil).Want(t, http.StatusOK)
	cur := s.Status(t).Revision

	got := e2e.ListKeys(first)
	token := e2e.Deref(first.NextPageToken)
	pages := 1
	for token != "" {
		var page client.ListResponse
		r := s.Do(t, "GET", "/v1/kv?key=p/&prefix=true&limit=3&page_token="+token, nil).Ok(t, http.StatusOK, &page)
		pages++
		if page.Header.Revision != cur {
			t.Errorf("%s: header.revision %d, want the current %d", r.Req, page.Header.Revision, cur)
		}
		if page.Count != 10 {
			t.Errorf("%s: count %d, want 10, the whole range at revision %d", r.Req, page.Count, rev0)
		}
		for _, kv := range page.Kvs {
			if want, ok := orig[e2e.KeyOf(&kv)]; !ok || e2e.KVString(&kv) != e2e.KVString(&want) {
				t.Errorf("%s: %s, want it as at revision %d: %s", r.Req, e2e.KVString(&kv), rev0, e2e.KVString(&want))
			}
		}
		got = append(got, e2e.ListKeys(page)...)
		if page.More != (e2e.Deref(page.NextPageToken) != "") {
			t.Errorf("%s: more %v with next_page_token %q", r.Req, page.More, e2e.Deref(page.NextPageToken))
		}
		token = e2e.Deref(page.NextPageToken)
	}
	want := slices.Sorted(func(yield func(string) bool) {
		for k := range orig {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(got, want) || pages != 4 {
		t.Errorf("pages gave %q in %d pages, want %q in 4", got, pages, want)
	}

	for _, tt := range []struct{ name, query string }{
		{"another range", "key=q&prefix=true&page_token="},
		{"another revision", fmt.Sprintf("key=p/&prefix=true&revision=%d&page_token=", cur)},
		{"descending order", "key=p/&prefix=true&sort_order=descend&page_token="},
		{"sorted by value", "key=p/&prefix=true&sort_target=value&page_token="},
	} {
		s.Do(t, "GET", "/v1/kv?"+tt.query+e2e.Deref(first.NextPageToken), nil).WantError(t, http.StatusBadRequest, "invalid_argument")
	}
	// The revision the token names, given again, is fine.
	s.Do(t, "GET", fmt.Sprintf("/v1/kv?key=p/&prefix=true&revision=%d&page_token=%s", rev0, e2e.Deref(first.NextPageToken)), nil).Want(t, http.StatusOK)

	// Compacting exactly at the page's revision keeps it readable; past it
	// the token is gone.
	s.Do(t, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d}`, rev0))).Want(t, http.StatusOK)
	s.Do(t, "GET", "/v1/kv?key=p/&prefix=true&limit=3&page_token="+e2e.Deref(first.NextPageToken), nil).Want(t, http.StatusOK)
	s.Do(t, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d}`, rev0+1))).Want(t, http.StatusOK)
	e := s.Do(t, "GET", "/v1/kv?key=p/&prefix=true&limit=3&page_token="+e2e.Deref(first.NextPageToken), nil).WantError(t, http.StatusGone, "compacted")
	if e2e.Deref(e.CompactRevision) != rev0+1 {
		t.Errorf("page token below the compact revision: compact_revision %d, want %d", e2e.Deref(e.CompactRevision), rev0+1)
	}
}

// TestListSortAndFilters covers sort targets and orders, keys_only,
// count_only and the revision filters.
func TestListSortAndFilters(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// Keys whose versions, create and mod revisions and values all order
	// differently from the keys.
	writes := []struct{ key, value string }{
		{"s/c", "3"}, {"s/a", "5"}, {"s/e", "1"}, {"s/b", "4"}, {"s/d", "2"},
		{"s/a", "9"}, {"s/c", "0"}, {"s/a", "6"},
	}
	for _, w := range writes {
		s.Put(t, w.key, w.value)
	}
	s.Put(t, "t", "outside")

	fields := map[string]func(kv *client.KeyValue) string{
		"key":     func(kv *client.KeyValue) string { return e2e.KeyOf(kv) },
		"value":   func(kv *client.KeyValue) string { return e2e.ValueOf(kv) },
		"version": func(kv *client.KeyValue) string { return fmt.Sprintf("%020d", kv.Version) },
		"create":  func(kv *client.KeyValue) string { return fmt.Sprintf("%020d", kv.CreateRevision) },
		"mod":     func(kv *client.KeyValue) string { return fmt.Sprintf("%020d", kv.ModRevision) },
	}
	for target, field := range fields {
		for _, order := range []string{"", "ascend", "descend"} {
			name := target + "/" + cmp.Or(order, "default")
			t.Run(name, func(t *testing.T) {
				q := "/v1/kv?key=s/&prefix=true&sort_target=" + target
				if order != "" {
					q += "&sort_order=" + order
				}
				var l client.ListResponse
				r := s.Do(t, "GET", q, nil).Ok(t, http.StatusOK, &l)
				if len(l.Kvs) != 5 {
					t.Fatalf("%s = %d kvs, want 5", r.Req, len(l.Kvs))
				}
				sorted := slices.IsSortedFunc(l.Kvs, func(a, b client.KeyValue) int {
					c := strings.Compare(field(&a), field(&b))
					if order == "descend" {
						c = -c
					}
					return c
				})
				if !sorted {
					t.Errorf("%s gave %q, not in %s order of %s", r.Req, e2e.ListKeys(l), cmp.Or(order, "ascend"), target)
				}
			})
		}
	}
	t.Run("key descend limit", func(t *testing.T) {
		var l client.ListResponse
		r := s.Do(t, "GET", "/v1/kv?key=s/&prefix=true&sort_order=descend&limit=2", nil).Ok(t, http.StatusOK, &l)
		if got := e2e.ListKeys(l); !slices.Equal(got, []string{"s/e", "s/d"}) || !l.More || e2e.Deref(l.NextPageToken) != "" {
			t.Errorf("%s = %q more %v token %q, want [s/e s/d], more, no token", r.Req, got, l.More, e2e.Deref(l.NextPageToken))
		}
	})

	t.Run("keys_only", func(t *testing.T) {
		r := s.Do(t, "GET", "/v1/kv?key=s/&prefix=true&keys_only=true", nil).Want(t, http.StatusOK)
		var l struct {
			KVs []map[string]json.RawMessage `json:"kvs"`
		}
		r.Decode(t, &l)
		if len(l.KVs) != 5 {
			t.Fatalf("%s = %s, want 5 kvs", r.Req, r.Body)
		}
		for _, kv := range l.KVs {
			_, v := kv["value"]
			_, vb := kv["value_base64"]
			if v || vb || kv["key"] == nil || kv["mod_revision"] == nil {
				t.Errorf("%s: kv %v, want key and revisions without a value", r.Req, kv)
			}
		}
	})
	t.Run("count_only", func(t *testing.T) {
		var l client.ListResponse
		r := s.Do(t, "GET", "/v1/kv?key=s/&prefix=true&count_only=true", nil).Ok(t, http.StatusOK, &l)
		if len(l.Kvs) != 0 || l.Count != 5 || l.More {
			t.Errorf("%s = %s, want count 5 and no kvs", r.Req, r.Body)
		}
	})

	// Revisions: s/c 2 (mod 8), s/a 3 (mod 9), s/e 4, s/b 5, s/d 6.
	var snapshot client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=s/&prefix=true", nil).Ok(t, http.StatusOK, &snapshot)
	filters := []struct {
		name  string
		query string
		keep  func(kv *client.KeyValue) bool
	}{
		{"min_mod_revision", "min_mod_revision=6", func(kv *client.KeyValue) bool { return kv.ModRevision >= 6 }},
		{"max_mod_revision", "max_mod_revision=6", func(kv *client.KeyValue) bool { return kv.ModRevision <= 6 }},
		{"min_create_revision", "min_create_revision=4", func(kv *client.KeyValue) bool { return kv.CreateRevision >= 4 }},
		{"max_create_revision", "max_create_revision=4", func(kv *client.KeyValue) bool { return kv.CreateRevision <= 4 }},
		{"mod window", "min_mod_revision=5&max_mod_revision=8", func(kv *client.KeyValue) bool { return kv.ModRevision >= 5 && kv.ModRevision <= 8 }},
		{"create and mod", "min_create_revision=3&max_mod_revision=6", func(kv *client.KeyValue) bool { return kv.CreateRevision >= 3 && kv.ModRevision <= 6 }},
		{"nothing", "min_mod_revision=100", func(kv *client.KeyValue) bool { return false }},
	}
	for _, tt := range filters {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for i := range snapshot.Kvs {
				if tt.keep(&snapshot.Kvs[i]) {
					want = append(want, e2e.KeyOf(&snapshot.Kvs[i]))
				}
			}
			var l client.ListResponse
			r := s.Do(t, "GET", "/v1/kv?key=s/&prefix=true&"+tt.query, nil).Ok(t, http.StatusOK, &l)
			if got := e2e.ListKeys(l); !slices.Equal(got, want) {
				t.Errorf("%s = %q, want %q", r.Req, got, want)
			}
		})
	}
}

// TestListRevisions covers reads at a revision: current, past, future,
// below and exactly at the compact revision.
func TestListRevisions(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// The revisions are those of a fresh store, which begins at 1; a
	// gateway's cluster has taken some before the test begins (its
	// deployment's marker): at(R) is the revision R of a fresh store.
	off := s.Status(t).Revision - 1
	at := func(rev int64) int64 { return rev + off }
	for i := range 6 {
		s.Put(t, "r", fmt.Sprintf("v%d", i+2)) // value v<R> at revision at(R)
	}
	s.Do(t, "DELETE", "/v1/kv/r", nil).Want(t, http.StatusOK) // revision at(8)
	cur := s.Status(t).Revision
	if cur != at(8) {
		t.Fatalf("revision %d after 7 writes, want %d", cur, at(8))
	}
	s.Do(t, "POST", "/v1/compact", fmt.Appendf(nil, `{"revision":%d}`, at(5))).Want(t, http.StatusOK)

	tests := []struct {
		rev    int64
		status int
		value  string // of r, "" for none
	}{
		{0, 200, ""},
		{cur, 200, ""},
		{at(7), 200, "v7"},
		{at(6), 200, "v6"},
		{at(5), 200, "v5"}, // exactly the compact revision
		{at(4), 410, ""},
		{1, 410, ""},
		{cur + 1, 400, ""},
		{1 << 40, 400, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.rev), func(t *testing.T) {
			for _, path := range []string{fmt.Sprintf("/v1/kv?key=r&revision=%d", tt.rev), fmt.Sprintf("/v1/kv/r?revision=%d", tt.rev)} {
				r := s.Do(t, "GET", path, nil)
				switch tt.status {
				case 410:
					if e := r.WantError(t, 410, "compacted"); e2e.Deref(e.CompactRevision) != at(5) {
						t.Errorf("%s = %s, want compact_revision %d", r.Req, r.Body, at(5))
					}
				case 400:
					r.WantError(t, 400, "future_revision")
				default:
					if tt.value == "" && strings.HasPrefix(path, "/v1/kv/") {
						r.WantError(t, 404, "key_not_found")
						continue
					}
					var got string
					var header client.ResponseHeader
					if strings.HasPrefix(path, "/v1/kv/") {
						var g client.GetResponse
						r.Ok(t, 200, &g)
						got, header = e2e.ValueOf(&g.Kv), g.Header
					} else {
						var l client.ListResponse
						r.Ok(t, 200, &l)
						if len(l.Kvs) == 1 {
							got = e2e.ValueOf(&l.Kvs[0])
						}
						header = l.Header
					}
					if got != tt.value || header.Revision != cur {
						t.Errorf("%s = %s, want value %q and header.revision %d", r.Req, bytes.TrimSpace(r.Body), tt.value, cur)
					}
				}
			}
		})
	}
}
