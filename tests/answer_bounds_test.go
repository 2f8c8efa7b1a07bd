package tests

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestTxnRangesBounded is one small txn of 8 ranges over a prefix of 24
// MiB of values: the answer would be 192 MiB. The server refuses it with
// 400 naming --max-response-bytes (64 MiB by default) and allocates about
// that bound, not the answer; the same ranges with keys_only allocate
// next to nothing, since they read no value; and a txn that writes and
// reads too much changes nothing.
func TestTxnRangesBounded(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	const mib = 1 << 20
	value := bytes.Repeat([]byte("v"), mib)
	for i := range 24 {
		s.Do(t, "PUT", e2e.KeyPath(fmt.Sprintf("big/%02d", i)), value).Want(t, http.StatusOK)
	}
	ranges := func(opts string) string {
		var ops []string
		for range 8 {
			ops = append(ops, `{"range":{"key":"big/","prefix":true`+opts+`}}`)
		}
		return strings.Join(ops, ",")
	}

	var r *e2e.Reply
	got := s.AllocatedBy(t, func() { r = s.Txn(t, `{"success":[`+ranges("")+`]}`) })
	e := r.WantError(t, http.StatusBadRequest, "invalid_argument")
	if !strings.Contains(e.Message, "max-response-bytes") {
		t.Errorf("%s: message %q does not name --max-response-bytes", r.Req, e.Message)
	}
	t.Logf("8 ranges over 24 MiB: refused after allocating %.1f MiB", got/mib)
	if got > 100*mib {
		t.Errorf("%s allocated %.0f MiB on the server, want at most 100 (the bound is 64 MiB, the answer 192)", r.Req, got/mib)
	}

	var res client.TxnResponse
	got = s.AllocatedBy(t, func() {
		s.Txn(t, `{"success":[`+ranges(`,"keys_only":true`)+`]}`).Ok(t, http.StatusOK, &res)
	})
	if len(res.Responses) != 8 || len(res.Responses[7].Range.Kvs) != 24 {
		t.Fatalf("keys_only txn = %+v, want 8 ranges of 24 keys", res)
	}
	t.Logf("8 keys_only ranges over 24 MiB: allocated %.1f MiB", got/mib)
	if got > 8*mib {
		t.Errorf("8 keys_only ranges over 24 MiB of values allocated %.0f MiB on the server, want at most 8", got/mib)
	}

	before := s.Status(t).Revision
	r = s.Txn(t, `{"success":[{"put":{"key":"written","value":"x"}},`+ranges("")+`]}`)
	r.WantError(t, http.StatusBadRequest, "invalid_argument")
	if after := s.Status(t).Revision; after != before {
		t.Errorf("a refused txn that also wrote moved the revision from %d to %d", before, after)
	}
	s.Do(t, "GET", "/v1/kv/written", nil).WantError(t, http.StatusNotFound, "key_not_found")

	// A range's limit is the list's: at most 10000.
	s.Txn(t, `{"success":[{"range":{"key":"big/","prefix":true,"limit":10001}}]}`).WantError(t, http.StatusBadRequest, "invalid_argument")
	s.Txn(t, `{"success":[{"range":{"key":"big/","prefix":true,"limit":60}}]}`).Want(t, http.StatusOK)
}
