package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// decodeTxn decodes a txn body and converts it, as the handler does.
func decodeTxn(body string) (kv.TxnRequest, Access, error) {
	var j wire.TxnRequest
	var a Access
	if err := wire.Decode([]byte(body), &j); err != nil {
		return kv.TxnRequest{}, a, err
	}
	t, err := j.Txn(&a)
	return t, a, err
}

func TestTxnDecode(t *testing.T) {
	valid := []struct {
		name  string
		body  string
		check func(kv.TxnRequest) bool
	}{
		{"empty", `{}`, func(r kv.TxnRequest) bool { return len(r.Compare)+len(r.Success)+len(r.Failure) == 0 }},
		{"contract example", `{
			"compare": [
				{"key": "a", "target": "value", "result": "equal", "value": "x"},
				{"key": "b", "target": "mod", "result": "less", "mod_revision": 5},
				{"key": "p/", "range_end": "p0", "target": "version", "result": "greater", "version": 0}
			],
			"success": [
				{"put": {"key": "a", "value": "y", "lease": 0, "prev_kv": true}},
				{"delete": {"key": "tmp/", "prefix": true}},
				{"range": {"key": "a"}},
				{"txn": {"compare": [], "success": [], "failure": []}}
			],
			"failure": [{"range": {"key": "a"}}]
		}`, func(r kv.TxnRequest) bool {
			return len(r.Compare) == 3 && string(r.Compare[0].Value) == "x" &&
				r.Compare[1].Target == kv.CompareMod && r.Compare[1].Result == kv.CompareLess && r.Compare[1].Number == 5 &&
				string(r.Compare[2].End) == "p0" &&
				len(r.Success) == 4 && r.Success[0].Put != nil && string(r.Success[0].Put.Value) == "y" && r.Success[0].Put.PrevKV &&
				string(r.Success[1].Delete.End) == "tmp0" && r.Success[2].Range != nil && r.Success[3].Txn != nil &&
				len(r.Failure) == 1
		}},
		{"base64 twins", `{"compare":[{"key_base64":"/w==","target":"value","result":"equal","value_base64":"AA=="}],
			"success":[{"put":{"key_base64":"/w==","value_base64":"/w=="}}]}`, func(r kv.TxnRequest) bool {
			return bytes.Equal(r.Compare[0].Key, []byte{0xff}) && bytes.Equal(r.Compare[0].Value, []byte{0}) &&
				bytes.Equal(r.Success[0].Put.Value, []byte{0xff})
		}},
		{"put without value", `{"success":[{"put":{"key":"a","ignore_value":true}}]}`, func(r kv.TxnRequest) bool {
			return r.Success[0].Put.Value == nil && r.Success[0].Put.IgnoreValue
		}},
		{"from_key", `{"success":[{"range":{"key":"a","from_key":true,"sort_order":"descend","sort_target":"mod","limit":3}}]}`, func(r kv.TxnRequest) bool {
			o := r.Success[0].Range
			return bytes.Equal(o.End, []byte{0}) && o.Options.SortOrder == kv.SortDescend && o.Options.SortTarget == kv.SortByMod && o.Options.Limit == 3
		}},
		{"lease compare zero", `{"compare":[{"key":"a","target":"lease","result":"equal","lease":0}]}`, func(r kv.TxnRequest) bool {
			return r.Compare[0].Target == kv.CompareLease && r.Compare[0].Number == 0
		}},
	}
	for _, tt := range valid {
		t.Run(tt.name, func(t *testing.T) {
			r, _, err := decodeTxn(tt.body)
			if err != nil {
				t.Fatalf("decode %s: %v", tt.body, err)
			}
			if !tt.check(r) {
				t.Errorf("decode %s = %+v, not what the body says", tt.body, r)
			}
		})
	}

	invalid := []struct{ name, body string }{
		{"not JSON", `{`},
		{"empty body", ``},
		{"array", `[]`},
		{"trailing bracket", `{}]`},
		{"trailing brace", `{}}`},
		{"trailing object", `{} {}`},
		{"unknown field", `{"compares":[]}`},
		{"unknown op field", `{"success":[{"put":{"key":"a","val":"x"}}]}`},
		{"wrong type", `{"success":{}}`},
		{"compare without key", `{"compare":[{"target":"version","result":"equal","version":1}]}`},
		{"compare empty key", `{"compare":[{"key":"","target":"version","result":"equal","version":1}]}`},
		{"compare bad target", `{"compare":[{"key":"a","target":"size","result":"equal","version":1}]}`},
		{"compare bad result", `{"compare":[{"key":"a","target":"version","result":"equals","version":1}]}`},
		{"compare without operand", `{"compare":[{"key":"a","target":"mod","result":"equal","version":1}]}`},
		{"value compare without value", `{"compare":[{"key":"a","target":"value","result":"equal"}]}`},
		{"both key forms", `{"success":[{"put":{"key":"a","key_base64":"YQ=="}}]}`},
		{"bad base64", `{"success":[{"put":{"key_base64":"!"}}]}`},
		{"bad value base64", `{"success":[{"put":{"key":"a","value_base64":"%%"}}]}`},
		{"op with two kinds", `{"success":[{"put":{"key":"a"},"range":{"key":"a"}}]}`},
		{"empty op", `{"success":[{}]}`},
		{"null op", `{"failure":[{"put":null}]}`},
		{"prefix and range_end", `{"success":[{"delete":{"key":"a","prefix":true,"range_end":"b"}}]}`},
		{"empty range_end", `{"success":[{"range":{"key":"a","range_end":""}}]}`},
		{"bad sort order", `{"success":[{"range":{"key":"a","sort_order":"up"}}]}`},
		{"bad sort target", `{"success":[{"range":{"key":"a","sort_target":"size"}}]}`},
		{"nested error", `{"success":[{"txn":{"failure":[{"delete":{}}]}}]}`},
		{"number too large", `{"compare":[{"key":"a","target":"version","result":"equal","version":1e30}]}`},
		{"fractional", `{"compare":[{"key":"a","target":"version","result":"equal","version":1.5}]}`},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decodeTxn(tt.body)
			var we *wire.Error
			if !errors.As(err, &we) || we.Code != kv.CodeInvalidArgument {
				t.Errorf("decode %s = %v, want an invalid_argument error", tt.body, err)
			}
		})
	}
}

func TestTxnThroughRouter(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "x")
	rec := mustServe(t, h, http.StatusOK, "POST", "/v1/txn",
		`{"compare":[{"key":"a","target":"value","result":"equal","value":"x"}],
		  "success":[{"put":{"key":"a","value":"y","prev_kv":true}},{"range":{"key":"a"}}],
		  "failure":[{"range":{"key":"a"}}]}`)
	var res wire.TxnResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatalf("POST /v1/txn: body %q: %v", rec.Body, err)
	}
	if !res.Succeeded || len(res.Responses) != 2 || res.Responses[0].Put == nil || res.Responses[0].Put.PrevKV == nil || res.Responses[0].Put.PrevKV.Value != "x" ||
		res.Responses[1].Range == nil || len(res.Responses[1].Range.KVs) != 1 || res.Responses[1].Range.KVs[0].Value != "y" {
		t.Errorf("POST /v1/txn = %s, want success with prev_kv x and range y", rec.Body)
	}

	for _, body := range []string{
		`{"success":[{"put":{"key":"a","value":"1"}},{"put":{"key":"a","value":"2"}}]}`,
		`{"success":[{"put":{"key":"a"}}],"extra":1}`,
		`{"success":[{"put":{"key":"a"}}]}]`,
	} {
		rec := mustServe(t, h, http.StatusBadRequest, "POST", "/v1/txn", body)
		if code := errorCode(t, rec); code != "invalid_argument" {
			t.Errorf("POST /v1/txn %s: code %q, want invalid_argument", body, code)
		}
	}
	big := `{"success":[` + strings.Repeat(`{"range":{"key":"a"}},`, 200) + `{"range":{"key":"a"}}]}`
	rec = mustServe(t, h, http.StatusBadRequest, "POST", "/v1/txn", big)
	if code := errorCode(t, rec); code != "invalid_argument" {
		t.Errorf("POST /v1/txn with 201 ops: code %q, want invalid_argument", code)
	}
}

// checkTxnShape checks what toTxn promises of a request it accepted:
// every op is exactly one kind, every key is set, every selector is well
// formed, and a records every key the request can write.
func checkTxnShape(t *testing.T, r *kv.TxnRequest) (writes int) {
	t.Helper()
	for _, c := range r.Compare {
		if len(c.Key) == 0 || (c.End != nil && len(c.End) == 0) {
			t.Fatalf("accepted compare %+v with an empty key or range end", c)
		}
		if c.Target < kv.CompareValue || c.Target > kv.CompareLease || c.Result < kv.CompareEqual || c.Result > kv.CompareLess {
			t.Fatalf("accepted compare %+v with an unknown target or result", c)
		}
	}
	for _, branch := range [][]kv.Op{r.Success, r.Failure} {
		for _, op := range branch {
			n := 0
			for _, set := range []bool{op.Put != nil, op.Delete != nil, op.Range != nil, op.Txn != nil} {
				if set {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("accepted op %+v with %d kinds", op, n)
			}
			switch {
			case op.Put != nil:
				if len(op.Put.Key) == 0 {
					t.Fatalf("accepted a put of the empty key")
				}
				writes++
			case op.Delete != nil:
				if len(op.Delete.Key) == 0 || (op.Delete.End != nil && len(op.Delete.End) == 0) {
					t.Fatalf("accepted delete %+v", op.Delete)
				}
				writes++
			case op.Range != nil:
				if len(op.Range.Key) == 0 || (op.Range.End != nil && len(op.Range.End) == 0) {
					t.Fatalf("accepted range %+v", op.Range)
				}
				if o := op.Range.Options; o.SortOrder < kv.SortNone || o.SortOrder > kv.SortDescend ||
					o.SortTarget < kv.SortByKey || o.SortTarget > kv.SortByValue {
					t.Fatalf("accepted range options %+v", o)
				}
			default:
				writes += checkTxnShape(t, op.Txn)
			}
		}
	}
	return writes
}

var txnSeeds = []string{
	`{}`,
	`{"compare":[{"key":"a","target":"value","result":"equal","value":"x"}],"success":[{"put":{"key":"a","value":"y"}}],"failure":[{"range":{"key":"a"}}]}`,
	`{"compare":[{"key":"p/","range_end":"p0","target":"version","result":"greater","version":0}],"success":[{"delete":{"key":"p/","prefix":true,"prev_kv":true}}]}`,
	`{"compare":[{"key_base64":"/w==","target":"mod","result":"less","mod_revision":5}],"success":[{"put":{"key_base64":"/w==","value_base64":"AA==","prev_kv":true}}]}`,
	`{"success":[{"txn":{"compare":[{"key":"a","target":"create","result":"not_equal","create_revision":0}],"success":[{"put":{"key":"b"}}],"failure":[{"put":{"key":"b"}}]}}]}`,
	`{"success":[{"range":{"key":"a","from_key":true,"limit":2,"sort_target":"value","sort_order":"descend","keys_only":true}}]}`,
	`{"success":[{"range":{"key":"a","range_end":"z","revision":1,"count_only":true,"min_mod_revision":1,"max_create_revision":9}}]}`,
	`{"success":[{"put":{"key":"a","lease":12345}}]}`,
	`{"success":[{"put":{"key":"a"}},{"delete":{"key":"a"}}]}`,
	`{"success":[{"put":{"key":"a","ignore_value":true,"ignore_lease":true}}]}`,
	`{"compare":[{"key":"a","target":"lease","result":"equal","lease":0}],"failure":[{"txn":{"success":[{"delete":{"key":"a","from_key":true}}]}}]}`,
	`{"success":[{"range":{"key":"a","revision":999999}}]}`,
	`{"success":[{"put":{"key":"a","key_base64":"YQ=="}}]}`,
	`{"success":[{}]}`,
	`{"success":[{"put":{"key":"a"}}]}]`,
	`[]`,
	`null`,
}

// FuzzTxnRequest feeds arbitrary txn bodies to the decoder and to the
// route: the decoder never panics and either refuses with a clear
// invalid_argument or gives a well-formed request; the route answers
// every body without a 500.
func FuzzTxnRequest(f *testing.F) {
	h, _ := newTestHandler(f, Config{})
	mustServe(f, h, http.StatusOK, "PUT", "/v1/kv/a", "x")
	for _, s := range txnSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r, a, err := decodeTxn(body)
		if err != nil {
			var we *wire.Error
			if !errors.As(err, &we) || we.Code != kv.CodeInvalidArgument || we.Message == "" {
				t.Fatalf("decode %q = %v, want an invalid_argument error with a message", body, err)
			}
		} else {
			if !json.Valid([]byte(body)) {
				t.Fatalf("decode %q accepted a body that is not one JSON value", body)
			}
			if writes := checkTxnShape(t, &r); len(a.Write) != writes {
				t.Fatalf("decode %q: access records %d writes, the request has %d", body, len(a.Write), writes)
			}
		}

		rec := serve(t, h, "POST", "/v1/txn", body)
		switch {
		case rec.Code == http.StatusOK:
			if err != nil {
				t.Fatalf("POST /v1/txn %q = 200, but the decoder refused it: %v", body, err)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("POST /v1/txn %q = 200 with a body that is not JSON: %q", body, rec.Body)
			}
		case rec.Code >= 500 && rec.Code != http.StatusInsufficientStorage:
			t.Fatalf("POST /v1/txn %q = %d %s", body, rec.Code, rec.Body)
		default:
			errorCode(t, rec)
		}
	})
}

// TestAnswerBounds checks the bounds of one answer: a list page or a
// txn's ranges over more than MaxResponseBytes of keys and values answer
// 400 naming the bound, and a txn range without a limit answers all of
// its keys up to 10000 and 400 past them; keys_only, count_only and
// limits keep answers within the bounds.
func TestAnswerBounds(t *testing.T) {
	h, store := newTestHandler(t, Config{MaxResponseBytes: 1 << 20})
	value := strings.Repeat("v", 256<<10)
	for i := range 10 {
		mustServe(t, h, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/big%%2F%d", i), value)
	}
	tooLarge := func(rec *httptest.ResponseRecorder, field string, want int64) {
		t.Helper()
		var e struct {
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusBadRequest ||
			e.Error["code"] != "invalid_argument" || e.Error[field] != float64(want) {
			t.Errorf("answer = %d %s, want 400 invalid_argument with %s %d", rec.Code, rec.Body, field, want)
		}
	}
	tooLarge(serve(t, h, "GET", "/v1/kv?key=big/&prefix=true", ""), "max_response_bytes", 1<<20)
	tooLarge(serve(t, h, "POST", "/v1/txn", `{"success":[{"range":{"key":"big/","prefix":true,"limit":2}},{"range":{"key":"big/","prefix":true,"limit":2}}]}`),
		"max_response_bytes", 1<<20)
	for _, ok := range []string{
		"/v1/kv?key=big/&prefix=true&limit=3",
		"/v1/kv?key=big/&prefix=true&keys_only=true",
		"/v1/kv?key=big/&prefix=true&count_only=true",
	} {
		mustServe(t, h, http.StatusOK, "GET", ok, "")
	}

	// 10001 small keys: a range without a limit may return 10000.
	for i := 0; i < 10001; i += 100 {
		var ops []kv.Op
		for j := i; j < min(i+100, 10001); j++ {
			ops = append(ops, kv.Op{Put: &kv.PutRequest{Key: fmt.Appendf(nil, "many/%05d", j)}})
		}
		if _, err := store.Txn(context.Background(), kv.TxnRequest{Success: ops}, nil); err != nil {
			t.Fatalf("Txn(puts %d..) = %v", i, err)
		}
	}
	rec := serve(t, h, "POST", "/v1/txn", `{"success":[{"range":{"key":"many/","prefix":true,"keys_only":true}}]}`)
	tooLarge(rec, "max_keys", 10000)
	rec = mustServe(t, h, http.StatusOK, "POST", "/v1/txn", `{"success":[{"range":{"key":"many/","range_end":"many/10000","keys_only":true}}]}`)
	var res wire.TxnResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || len(res.Responses) != 1 || res.Responses[0].Range == nil || len(res.Responses[0].Range.KVs) != 10000 || res.Responses[0].Range.More {
		t.Errorf("txn range of 10000 keys without a limit = %.200s, want all 10000 keys", rec.Body)
	}
	mustServe(t, h, http.StatusOK, "POST", "/v1/txn", `{"success":[{"range":{"key":"many/","prefix":true,"count_only":true}},{"range":{"key":"many/","prefix":true,"keys_only":true,"limit":10000}}]}`)
}
