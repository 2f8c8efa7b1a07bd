package tests

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestTxn covers POST /v1/txn: every compare target and result, both
// branches, nested txns, one revision per txn, and the errors.
func TestTxn(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-txn-ops=6")
	var l client.LeaseResponse
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600,"id":77}`)).Ok(t, http.StatusCreated, &l)
	// Over etcd the grant wrote the lease's record: one revision more.
	off := s.Status(t).Revision - 1
	s.Put(t, "a", "1")                                            // revision 2 (+off)
	s.Put(t, "b", "2")                                            // 3
	s.Put(t, "b", "3")                                            // 4
	s.Do(t, "PUT", "/v1/kv/l?lease=77", []byte("x")).Want(t, 200) // 5
	s.Put(t, "p/1", "x")                                          // 6
	s.Put(t, "p/2", "y")                                          // 7
	revAt := func(format string, rev int64) string { return fmt.Sprintf(format, rev+off) }

	// Each case's compare decides the branch; the branches read a.
	compares := []struct {
		name    string
		compare string
		holds   bool
	}{
		{"value equal", `{"key":"a","target":"value","result":"equal","value":"1"}`, true},
		{"value equal false", `{"key":"a","target":"value","result":"equal","value":"2"}`, false},
		{"value not_equal", `{"key":"a","target":"value","result":"not_equal","value":"2"}`, true},
		{"value greater", `{"key":"a","target":"value","result":"greater","value":"0"}`, true},
		{"value less", `{"key":"a","target":"value","result":"less","value":"0"}`, false},
		{"value_base64", `{"key":"a","target":"value","result":"equal","value_base64":"MQ=="}`, true},
		{"value of a missing key", `{"key":"zz","target":"value","result":"not_equal","value":"1"}`, false},
		{"version equal", `{"key":"b","target":"version","result":"equal","version":2}`, true},
		{"version greater", `{"key":"b","target":"version","result":"greater","version":2}`, false},
		{"version of a missing key", `{"key":"zz","target":"version","result":"equal","version":0}`, true},
		{"create equal", revAt(`{"key":"b","target":"create","result":"equal","create_revision":%d}`, 3), true},
		{"create of a missing key", `{"key":"zz","target":"create","result":"equal","create_revision":0}`, true},
		{"mod less", revAt(`{"key":"b","target":"mod","result":"less","mod_revision":%d}`, 5), true},
		{"mod less false", revAt(`{"key":"b","target":"mod","result":"less","mod_revision":%d}`, 4), false},
		{"mod not_equal", revAt(`{"key":"b","target":"mod","result":"not_equal","mod_revision":%d}`, 4), false},
		{"lease equal", `{"key":"l","target":"lease","result":"equal","lease":77}`, true},
		{"lease of an unleased key", `{"key":"a","target":"lease","result":"equal","lease":0}`, true},
		{"range_end every key", `{"key":"p/","range_end":"p0","target":"version","result":"equal","version":1}`, true},
		{"prefix every key", `{"key":"p/","prefix":true,"target":"value","result":"greater","value":"x"}`, false},
		{"from_key", revAt(`{"key":"p/","from_key":true,"target":"create","result":"greater","create_revision":%d}`, 5), true},
		// As in etcd, a range holding no key compares as one zero key.
		{"range of no key", `{"key":"q/","prefix":true,"target":"version","result":"equal","version":0}`, true},
		{"range of no key greater", `{"key":"q/","prefix":true,"target":"version","result":"greater","version":0}`, false},
		{"value over a range of no key", `{"key":"q/","prefix":true,"target":"value","result":"not_equal","value":"x"}`, false},
	}
	for _, tt := range compares {
		t.Run("compare/"+tt.name, func(t *testing.T) {
			before := s.Status(t).Revision
			doc := fmt.Sprintf(`{"compare":[%s],"success":[{"range":{"key":"a"}}],"failure":[{"range":{"key":"b"}}]}`, tt.compare)
			var res client.TxnResponse
			r := s.Txn(t, doc).Ok(t, http.StatusOK, &res)
			want := "b"
			if tt.holds {
				want = "a"
			}
			if res.Succeeded != tt.holds || len(res.Responses) != 1 || res.Responses[0].Range == nil ||
				len(res.Responses[0].Range.Kvs) != 1 || e2e.KeyOf(&res.Responses[0].Range.Kvs[0]) != want {
				t.Errorf("%s with compare %s = %s, want succeeded %v reading %q", r.Req, tt.compare, r.Body, tt.holds, want)
			}
			if res.Header.Revision != before {
				t.Errorf("%s: a read-only txn at revision %d, want %d", r.Req, res.Header.Revision, before)
			}
		})
	}

	t.Run("atomic", func(t *testing.T) {
		before := s.Status(t).Revision
		doc := `{"compare":[{"key":"a","target":"value","result":"equal","value":"1"}],"success":[
			{"range":{"key":"a"}},
			{"put":{"key":"t/1","value":"x"}},
			{"put":{"key":"a","value":"2","prev_kv":true}},
			{"delete":{"key":"p/","prefix":true,"prev_kv":true}}]}`
		var res client.TxnResponse
		r := s.Txn(t, doc).Ok(t, http.StatusOK, &res)
		rev := before + 1
		if !res.Succeeded || res.Header.Revision != rev || len(res.Responses) != 4 {
			t.Fatalf("%s = %s, want the success branch at revision %d", r.Req, r.Body, rev)
		}
		rs := res.Responses
		switch {
		case rs[0].Range == nil || rs[0].Range.Header.Revision != before || len(rs[0].Range.Kvs) != 1 || e2e.ValueOf(&rs[0].Range.Kvs[0]) != "1":
			t.Errorf("%s: range before the writes = %+v, want a=1 at revision %d", r.Req, rs[0].Range, before)
		case rs[1].Put == nil || rs[1].Put.Header.Revision != rev:
			t.Errorf("%s: first put = %+v, want revision %d", r.Req, rs[1].Put, rev)
		case rs[2].Put == nil || rs[2].Put.PrevKv == nil || e2e.ValueOf(rs[2].Put.PrevKv) != "1":
			t.Errorf("%s: put with prev_kv = %+v, want prev_kv a=1", r.Req, rs[2].Put)
		case rs[3].Delete == nil || rs[3].Delete.Deleted != 2 || len(e2e.Deref(rs[3].Delete.PrevKvs)) != 2 || rs[3].Delete.Header.Revision != rev:
			t.Errorf("%s: delete = %+v, want 2 deleted with prev_kvs at revision %d", r.Req, rs[3].Delete, rev)
		}
		for _, k := range []string{"t/1", "a"} {
			if kv := s.Get(t, k); kv.ModRevision != rev {
				t.Errorf("after the txn %s has mod revision %d, want %d", k, kv.ModRevision, rev)
			}
		}
		if cur := s.Status(t).Revision; cur != rev {
			t.Errorf("after one txn the revision is %d, want %d", cur, rev)
		}
	})

	t.Run("nested", func(t *testing.T) {
		before := s.Status(t).Revision
		doc := `{"success":[
			{"put":{"key":"n/outer","value":"o"}},
			{"txn":{"compare":[{"key":"n/outer","target":"version","result":"equal","version":0}],
				"success":[{"put":{"key":"n/then","value":"t"}},{"range":{"key":"n/","prefix":true}},
					{"txn":{"success":[{"put":{"key":"n/deep","value":"d"}}]}}],
				"failure":[{"put":{"key":"n/else","value":"e"}}]}}]}`
		var res client.TxnResponse
		r := s.Txn(t, doc).Ok(t, http.StatusOK, &res)
		rev := before + 1
		if !res.Succeeded || res.Header.Revision != rev || len(res.Responses) != 2 || res.Responses[1].Txn == nil {
			t.Fatalf("%s = %s, want a put and a nested txn at revision %d", r.Req, r.Body, rev)
		}
		// As in etcd, every compare of a txn, nested ones too, sees the
		// store as it was before the txn: n/outer did not exist.
		inner := res.Responses[1].Txn
		if !inner.Succeeded || len(inner.Responses) != 3 || inner.Responses[1].Range == nil || inner.Responses[2].Txn == nil {
			t.Fatalf("%s: nested = %+v, want its success branch with a put, a range and a txn", r.Req, inner)
		}
		// A range sees the writes of the txn made before it.
		if got := e2e.KeysOf(inner.Responses[1].Range.Kvs); strings.Join(got, ",") != "n/outer,n/then" {
			t.Errorf("%s: nested range = %q, want the txn's own writes [n/outer n/then]", r.Req, got)
		}
		for _, k := range []string{"n/outer", "n/then", "n/deep"} {
			if kv := s.Get(t, k); kv.ModRevision != rev {
				t.Errorf("after the nested txn %s has mod revision %d, want %d", k, kv.ModRevision, rev)
			}
		}
		s.Do(t, "GET", "/v1/kv/n/else", nil).WantError(t, http.StatusNotFound, "key_not_found")
	})

	t.Run("empty", func(t *testing.T) {
		before := s.Status(t).Revision
		var res client.TxnResponse
		s.Txn(t, `{}`).Ok(t, http.StatusOK, &res)
		if !res.Succeeded || len(res.Responses) != 0 || res.Header.Revision != before {
			t.Errorf("an empty txn = %+v, want succeeded with no responses at revision %d", res, before)
		}
	})

	errors := []struct {
		name   string
		doc    string
		status int
		code   string
	}{
		{"two puts of a key", `{"success":[{"put":{"key":"d","value":"1"}},{"put":{"key":"d","value":"2"}}]}`, 400, "invalid_argument"},
		{"put under a delete", `{"success":[{"delete":{"key":"d/","prefix":true}},{"put":{"key":"d/x","value":"2"}}]}`, 400, "invalid_argument"},
		{"put in a nested txn and outside", `{"success":[{"put":{"key":"d","value":"1"}},{"txn":{"success":[{"put":{"key":"d","value":"2"}}]}}]}`, 400, "invalid_argument"},
		{"too many ops", `{"success":[` + puts(7) + `]}`, 400, "invalid_argument"},
		{"too many compares", `{"compare":[` + strings.Repeat(`{"key":"a","target":"version","result":"greater","version":0},`, 6) +
			`{"key":"a","target":"version","result":"greater","version":0}]}`, 400, "invalid_argument"},
		// A nested txn has the ops its parent leaves: 6 - 2 here.
		{"too many ops nested", `{"success":[` + puts(2) + `,{"txn":{"failure":[{"range":{"key":"a"}},{"range":{"key":"a"}},{"range":{"key":"a"}},{"range":{"key":"a"}},{"range":{"key":"a"}}]}}]}`, 400, "invalid_argument"},
		{"too many ops in failure", `{"failure":[` + puts(7) + `]}`, 400, "invalid_argument"},
		{"unknown lease", `{"success":[{"put":{"key":"d","value":"1","lease":4242}}]}`, 404, "lease_not_found"},
		{"unknown field", `{"success":[],"sucess":[]}`, 400, "invalid_argument"},
		{"two kinds in one op", `{"success":[{"put":{"key":"d"},"range":{"key":"d"}}]}`, 400, "invalid_argument"},
		{"no kind in an op", `{"success":[{}]}`, 400, "invalid_argument"},
		{"unknown target", `{"compare":[{"key":"a","target":"size","result":"equal","version":1}]}`, 400, "invalid_argument"},
		{"unknown result", `{"compare":[{"key":"a","target":"version","result":"greater_or_equal","version":1}]}`, 400, "invalid_argument"},
		{"missing operand", `{"compare":[{"key":"a","target":"mod","result":"equal"}]}`, 400, "invalid_argument"},
		{"value compare without value", `{"compare":[{"key":"a","target":"value","result":"equal"}]}`, 400, "invalid_argument"},
		{"empty key", `{"success":[{"put":{"key":"","value":"1"}}]}`, 400, "invalid_argument"},
		{"no key", `{"success":[{"range":{"prefix":true}}]}`, 400, "invalid_argument"},
		{"bad sort order", `{"success":[{"range":{"key":"a","sort_order":"up"}}]}`, 400, "invalid_argument"},
		{"a string for a number", `{"compare":[{"key":"a","target":"mod","result":"equal","mod_revision":"5"}]}`, 400, "invalid_argument"},
		{"future revision", `{"success":[{"range":{"key":"a","revision":100000}}]}`, 400, "future_revision"},
		{"not JSON", `compare=a`, 400, "invalid_argument"},
		{"two documents", `{}{}`, 400, "invalid_argument"},
		{"empty body", ``, 400, "invalid_argument"},
	}
	for _, tt := range errors {
		t.Run("error/"+tt.name, func(t *testing.T) {
			before := s.Status(t).Revision
			s.Txn(t, tt.doc).WantError(t, tt.status, tt.code)
			if after := s.Status(t).Revision; after != before {
				t.Errorf("a failed txn moved the revision from %d to %d", before, after)
			}
		})
	}
	t.Run("max ops", func(t *testing.T) {
		s.Txn(t, `{"success":[`+puts(6)+`],"failure":[`+puts(6)+`]}`).Want(t, http.StatusOK)
	})
	t.Run("the same key in both branches of a nested txn", func(t *testing.T) {
		s.Txn(t, `{"success":[{"txn":{"success":[{"put":{"key":"d","value":"1"}}],"failure":[{"put":{"key":"d","value":"2"}}]}}]}`).Want(t, http.StatusOK)
	})
}

// puts returns n put ops of distinct keys, as JSON.
func puts(n int) string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"put":{"key":"m/%d","value":"v"}}`, i)
	}
	return strings.Join(ops, ",")
}
