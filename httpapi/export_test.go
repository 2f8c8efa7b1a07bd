package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// exportLines reads an export: its header line, then its keys.
func exportLines(tb testing.TB, body []byte) (hdr struct {
	Header wire.ResponseHeader
	Count  int64
}, kvs []wire.KeyValue, last string) {
	tb.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 8<<20)
	for i := 0; sc.Scan(); i++ {
		if i == 0 {
			if err := json.Unmarshal(sc.Bytes(), &hdr); err != nil {
				tb.Fatalf("header line %q: %v", sc.Text(), err)
			}
			continue
		}
		last = sc.Text()
		var e wire.KeyValue
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			tb.Fatalf("line %d %q: %v", i+1, sc.Text(), err)
		}
		kvs = append(kvs, e)
	}
	return hdr, kvs, last
}

func TestExport(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	// More keys than a page, some of them large, and one not UTF-8.
	const n = 2500
	big := strings.Repeat("v", 8<<10)
	for i := range n {
		v := "small"
		if i%100 == 0 {
			v = big
		}
		mustServe(t, h, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/p/%05d", i), v)
	}
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/p/%FF", "\xfe")
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/q", "outside")
	rev := int64(n + 3)
	// A later write is not in the export of the revision before it.
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/p/later", "x")

	rec := mustServe(t, h, http.StatusOK, "GET", fmt.Sprintf("/v1/export?key=p/&prefix=true&revision=%d", rev), "")
	if ct := rec.Header().Get("Content-Type"); ct != ndjsonContentType || rec.Header().Get("X-Revision") != fmt.Sprint(rev) {
		t.Fatalf("Content-Type %q, X-Revision %q; want %s and %d", ct, rec.Header().Get("X-Revision"), ndjsonContentType, rev)
	}
	hdr, kvs, _ := exportLines(t, rec.Body.Bytes())
	if hdr.Header.Revision != rev || hdr.Count != n+1 || len(kvs) != n+1 {
		t.Fatalf("export: header %+v with %d keys, want revision %d, count and keys %d", hdr, len(kvs), rev, n+1)
	}
	for i, e := range kvs[:n] {
		want := "small"
		if i%100 == 0 {
			want = big
		}
		if wiretest.Key(e) != fmt.Sprintf("p/%05d", i) || wiretest.Value(e) != want || e.ModRevision != int64(i+2) || e.Version != 1 {
			t.Fatalf("line %d: %+v", i+2, e)
		}
	}
	if last := kvs[n]; last.KeyBase64 == "" || wiretest.Key(last) != "p/\xff" || wiretest.Value(last) != "\xfe" {
		t.Fatalf("the key that is not UTF-8: %+v", last)
	}

	// The export imports as it is.
	rec = mustServe(t, h, http.StatusOK, "POST", "/v1/import?key=p/&prefix=true&mode=replace", rec.Body.String())
	var res wire.RewriteResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.Deleted != 1 || res.Unchanged != n+1 || res.Created+res.Updated != 0 {
		t.Fatalf("the export imported back = %s, want p/later deleted and the rest unchanged", rec.Body)
	}
}

// compactingBackend compacts the store after the first key a range read
// gives, as a busy store may during a long export.
type compactingBackend struct {
	*embedded.Backend
	once sync.Once
}

func (b *compactingBackend) Each(ctx context.Context, key, end []byte, rev int64, fn func(*kv.KeyValue) error) (int64, error) {
	return b.Backend.Each(ctx, key, end, rev, func(e *kv.KeyValue) error {
		var err error
		b.once.Do(func() { err = b.Backend.Compact(ctx, b.Backend.Rev(), true) })
		if err != nil {
			return err
		}
		return fn(e)
	})
}

// TestExportCompactedMidway: an export whose revision is compacted after
// its first page ends with an error line, which an import refuses.
func TestExportCompactedMidway(t *testing.T) {
	b := storetest.Open(t, embedded.Options{})
	h := NewHandler(&compactingBackend{Backend: b}, nil, zerolog.Nop(), Config{})
	for i := range 1500 {
		if _, err := b.Put(context.Background(), kv.PutRequest{Key: fmt.Appendf(nil, "k%04d", i), Value: []byte("v")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/k0000", "w") // revision 1502
	rec := mustServe(t, h, http.StatusOK, "GET", "/v1/export?revision=1501", "")
	hdr, _, _ := exportLines(t, rec.Body.Bytes())
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	last := lines[len(lines)-1]
	if hdr.Count != 1500 || len(lines) >= 1502 || !strings.Contains(last, `"code":"compacted"`) || !strings.Contains(last, `"compact_revision":1502`) {
		t.Fatalf("an export compacted midway: count %d, %d lines, last %s; want an error line after fewer than 1500 keys", hdr.Count, len(lines), last)
	}
	rec = serve(t, h, "POST", "/v1/import", rec.Body.String())
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), fmt.Sprintf("line %d", len(lines))) {
		t.Fatalf("importing the cut export = %d %s, want 400 naming its last line", rec.Code, rec.Body)
	}
}

func TestExportRefused(t *testing.T) {
	h, b := newTestHandler(t, Config{})
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "1")
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "2")
	if err := b.Compact(context.Background(), 3, true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target string
		status int
		code   string
	}{
		{"/v1/export?revision=2", 410, "compacted"},
		{"/v1/export?revision=9", 400, "future_revision"},
		{"/v1/export?limit=5", 400, "invalid_argument"},
		{"/v1/export?range_end=b", 400, "invalid_argument"},
	} {
		if rec := serve(t, h, "GET", tc.target, ""); rec.Code != tc.status || errorCode(t, rec) != tc.code {
			t.Errorf("GET %s = %d %s, want %d %s", tc.target, rec.Code, rec.Body, tc.status, tc.code)
		}
	}
}
