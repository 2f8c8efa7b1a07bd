package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// TestBodyErrorsSayWhere checks that a bad txn body's error names the
// place in the body and what would be right there.
func TestBodyErrorsSayWhere(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	tests := []struct{ body, want string }{
		{`{"success":[{"putt":{"key":"a","value":"b"}}]}`,
			`unknown field "success[0].putt" (did you mean "put"?): the object there takes delete, put, range, txn`},
		{`{"compare":[{"key":"a","target":"version","result":"equal","value":"x"}]}`,
			`compare[0] has target "version" and needs the field "version" to compare with`},
		{`{"compare":[{"key":"a","target":"mod","result":"equal"}]}`,
			`compare[0] has target "mod" and needs the field "mod_revision" to compare with`},
		{`{"success":[{"range":{"key":"a","limt":1}}]}`,
			`unknown field "success[0].range.limt" (did you mean "limit"?)`},
		{`{"failure":[{"txn":{"succes":[]}}]}`,
			`unknown field "failure[0].txn.succes" (did you mean "success"?)`},
		{`{"compare":[],"nope":1}`, `unknown field "nope": the object there takes compare, failure, success`},
	}
	for _, tt := range tests {
		rec := serve(t, h, "POST", "/v1/txn", tt.body)
		if rec.Code != http.StatusBadRequest || !strings.Contains(errorMessage(t, rec), tt.want) {
			t.Errorf("POST /v1/txn %s = %d %s, want 400 with %q", tt.body, rec.Code, rec.Body, tt.want)
		}
	}
}
