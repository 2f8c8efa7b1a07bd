package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

func TestJSONBodiesThroughRouter(t *testing.T) {
	h, _ := newTestHandler(t, Config{MaxRequestBytes: 1024})
	for range 3 {
		mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "v")
	}
	tests := []struct {
		method, path, body string
		want               int
		code               string
	}{
		{"POST", "/v1/leases", `{"ttl":60}`, http.StatusCreated, ""},
		{"POST", "/v1/leases", `{"ttl":60,"id":9007199254740991}`, http.StatusCreated, ""},
		{"POST", "/v1/leases", `{"ttl":60,"id":9007199254740992}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/leases", `{"ttl":0}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/leases", `{"ttl":60}]`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/leases", `{"ttl":60,"extra":true}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/leases", ``, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/leases", `{"ttl":60,"id":"` + strings.Repeat("x", 2000) + `"}`, http.StatusRequestEntityTooLarge, "request_too_large"},
		{"POST", "/v1/compact", `{"revision":2}`, http.StatusOK, ""},
		{"POST", "/v1/compact", `{"revision":2}`, http.StatusGone, "compacted"},
		{"POST", "/v1/compact", `{"revision":99}`, http.StatusBadRequest, "future_revision"},
		{"POST", "/v1/compact", `{"revision":0}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/compact", `{"revision":3,"physical":"yes"}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/compact", `{"revision":3}}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/compact", `{"revision":3,"physical":true}`, http.StatusOK, ""},
	}
	for _, tt := range tests {
		rec := serve(t, h, tt.method, tt.path, tt.body)
		if rec.Code != tt.want {
			t.Errorf("%s %s %.40q = %d %s, want %d", tt.method, tt.path, tt.body, rec.Code, rec.Body, tt.want)
			continue
		}
		if tt.code != "" {
			if code := errorCode(t, rec); code != tt.code {
				t.Errorf("%s %s %.40q: code %q, want %q", tt.method, tt.path, tt.body, code, tt.code)
			}
		}
	}
}

// FuzzJSONBody feeds arbitrary bodies to the compact and lease decoders
// and routes: a body is either refused with invalid_argument or is one
// JSON value, and no body gets a 500.
func FuzzJSONBody(f *testing.F) {
	h, _ := newTestHandler(f, Config{})
	for range 3 {
		mustServe(f, h, http.StatusOK, "PUT", "/v1/kv/a", "v")
	}
	for _, s := range []string{`{"revision":2}`, `{"revision":3,"physical":true}`, `{"ttl":60,"id":0}`,
		`{"ttl":60,"id":9007199254740991}`, `{}`, `null`, `[]`, `{"ttl":1}]`, `{"ttl":1}}`, `{"ttl":"1"}`,
		`{"revision":1e3}`, `{"id":-1,"ttl":1}`, ` {"ttl": 5} `, `{"TTL":5}`, "{\"ttl\":1}\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range []any{&wire.CompactRequest{}, &wire.LeaseGrantRequest{}} {
			err := wire.Decode(body, v)
			if err != nil {
				var we *wire.Error
				if !errors.As(err, &we) || we.Code != kv.CodeInvalidArgument || statusOf[we.Code] != http.StatusBadRequest {
					t.Fatalf("wire.Decode(%q, %T) = %v, want an invalid_argument error", body, v, err)
				}
				continue
			}
			if !json.Valid(body) {
				t.Fatalf("wire.Decode(%q, %T) accepted a body that is not one JSON value", body, v)
			}
			if trimmed := bytes.TrimLeft(body, " \t\r\n"); trimmed[0] != '{' {
				t.Fatalf("wire.Decode(%q, %T) accepted a body that is not an object", body, v)
			}
		}
		for _, path := range []string{"/v1/leases", "/v1/compact"} {
			rec := serve(t, h, "POST", path, string(body))
			switch rec.Code {
			case http.StatusOK, http.StatusCreated:
			case http.StatusBadRequest, http.StatusGone, http.StatusConflict:
				// 409: the handler is shared by every input, and a lease
				// ID an earlier one granted is taken.
				if code := errorCode(t, rec); code == "" {
					t.Fatalf("POST %s %q = %d with no code", path, body, rec.Code)
				}
			default:
				t.Fatalf("POST %s %q = %d %s", path, body, rec.Code, rec.Body)
			}
			if rec.Code == http.StatusCreated {
				var l wire.LeaseResponse
				if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || l.ID < 1 || l.ID > maxLeaseID || l.TTL < 1 {
					t.Fatalf("POST %s %q = %s: want an id in [1, 2^53-1] and a positive ttl", path, body, rec.Body)
				}
			}
		}
	})
}

// TestJSONStringsNotUTF8: a JSON string that is not UTF-8 (raw bytes that
// are not, or an escaped UTF-16 surrogate without its pair) is refused.
// encoding/json replaced each bad byte and lone surrogate with U+FFFD, so
// a put of the key "\xff\xfe" wrote the key "\uFFFD\uFFFD" and answered
// 200: another key than the one sent.
func TestJSONStringsNotUTF8(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	bad := []struct{ name, body string }{
		{"raw bytes in a key", "{\"success\":[{\"put\":{\"key\":\"\xff\xfe\",\"value\":\"x\"}}]}"},
		{"raw bytes in a value", "{\"success\":[{\"put\":{\"key\":\"k\",\"value\":\"a\xc3\"}}]}"},
		{"overlong encoding", "{\"success\":[{\"put\":{\"key\":\"\xc0\xaf\",\"value\":\"x\"}}]}"},
		{"encoded surrogate", "{\"success\":[{\"put\":{\"key\":\"\xed\xa0\x80\",\"value\":\"x\"}}]}"},
		{"lone high surrogate", `{"success":[{"put":{"key":"\ud800","value":"x"}}]}`},
		{"lone low surrogate", `{"success":[{"put":{"key":"a\uDC00b","value":"x"}}]}`},
		{"high then not low", `{"success":[{"put":{"key":"\ud800\u0041","value":"x"}}]}`},
		{"high at the end", `{"success":[{"put":{"key":"k","value":"x\ud83d"}}]}`},
		{"in a compare", `{"compare":[{"key":"\udfff","target":"version","result":"equal","version":0}],"success":[{"put":{"key":"k","value":"x"}}]}`},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			rec := serve(t, h, "POST", "/v1/txn", b.body)
			if rec.Code != http.StatusBadRequest || errorCode(t, rec) != "invalid_argument" {
				t.Fatalf("POST /v1/txn %q = %d %s, want 400 invalid_argument", b.body, rec.Code, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), "UTF-8") {
				t.Errorf("POST /v1/txn %q: message %s does not say the string is not UTF-8", b.body, rec.Body)
			}
		})
	}
	rec := mustServe(t, h, http.StatusOK, "GET", "/v1/kv", "")
	if strings.Contains(rec.Body.String(), `"key"`) {
		t.Errorf("after refused txns, GET /v1/kv = %s, want no keys", rec.Body)
	}
	// What is UTF-8 still goes through, escaped or not: a surrogate pair,
	// an escaped backslash before a u, U+FFFD itself.
	good := []struct{ body, key string }{
		{`{"success":[{"put":{"key":"\ud83d\ude00","value":"x"}}]}`, "\U0001F600"},
		{"{\"success\":[{\"put\":{\"key\":\"\xf0\x9f\x98\x80\xc3\xa9\",\"value\":\"x\"}}]}", "\U0001F600é"},
		{`{"success":[{"put":{"key":"\\ud800","value":"x"}}]}`, `\ud800`},
		{`{"success":[{"put":{"key":"\ufffd","value":"x"}}]}`, "\uFFFD"},
	}
	for _, g := range good {
		mustServe(t, h, http.StatusOK, "POST", "/v1/txn", g.body)
		rec := mustServe(t, h, http.StatusOK, "GET", "/v1/kv/"+url.PathEscape(g.key)+"?raw=true", "")
		if rec.Body.String() != "x" {
			t.Errorf("after POST /v1/txn %s, GET the key %q = %q, want \"x\"", g.body, g.key, rec.Body)
		}
	}
}

// TestJSONDuplicateFields: an object naming a field twice is refused.
// encoding/json kept the last one, matching names case-insensitively, so
// {"key":"a","KEY":"b"} put b, and a txn whose "success" came twice ran
// the second, empty list and answered 200 having written nothing.
func TestJSONDuplicateFields(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	bad := []struct{ name, path, body string }{
		{"same name", "/v1/txn", `{"success":[{"put":{"key":"a","value":"x","value":"y"}}]}`},
		{"a list twice", "/v1/txn", `{"success":[{"put":{"key":"a","value":"x"}}],"success":[]}`},
		{"another case", "/v1/txn", `{"success":[{"put":{"key":"a","KEY":"b","value":"x"}}]}`},
		{"escaped name", "/v1/txn", `{"success":[{"put":{"key":"a","k\u0065y":"b","value":"x"}}]}`},
		{"kelvin sign", "/v1/txn", `{"success":[{"put":{"key":"a","\u212aey":"b","value":"x"}}]}`},
		{"nested txn", "/v1/txn", `{"success":[{"txn":{"compare":[],"compare":[]}}]}`},
		{"in a compare", "/v1/txn", `{"compare":[{"key":"a","target":"version","result":"equal","version":0,"version":1}]}`},
		{"lease", "/v1/leases", `{"ttl":60,"TTL":1}`},
		{"compact", "/v1/compact", `{"revision":1,"revision":1}`},
		{"watch stream", "/v1/watch/streams", `{"watches":[{"key":"a","key":"b"}]}`},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			rec := serve(t, h, "POST", b.path, b.body)
			if rec.Code != http.StatusBadRequest || errorCode(t, rec) != "invalid_argument" {
				t.Fatalf("POST %s %s = %d %s, want 400 invalid_argument", b.path, b.body, rec.Code, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), "more than once") {
				t.Errorf("POST %s %s: message %s does not say a field is repeated", b.path, b.body, rec.Body)
			}
		})
	}
	rec := mustServe(t, h, http.StatusOK, "GET", "/v1/status", "")
	if !strings.Contains(rec.Body.String(), `"revision":1,`) || !strings.Contains(rec.Body.String(), `"leases":0,`) {
		t.Errorf("after refused requests, GET /v1/status = %s, want revision 1 and no lease", rec.Body)
	}
	// The same name in different objects is no duplicate.
	mustServe(t, h, http.StatusOK, "POST", "/v1/txn",
		`{"compare":[{"key":"a","target":"version","result":"equal","version":0}],"success":[{"put":{"key":"a","value":"x"}},{"range":{"key":"a"}}],"failure":[{"range":{"key":"a"}}]}`)
}
