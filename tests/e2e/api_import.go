package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
)

// RangeState is the keys of a range as "k=v" lines, and the revision.
func (s *Server) RangeState(tb testing.TB, query string) (string, int64) {
	tb.Helper()
	var out []string
	var rev int64
	token := ""
	for {
		var res client.ListResponse
		q := query + "&limit=10000"
		if token != "" {
			q += "&page_token=" + token
		}
		s.Do(tb, "GET", "/v1/kv?"+q, nil).Ok(tb, http.StatusOK, &res)
		if rev == 0 {
			rev = res.Header.Revision
		}
		for i := range res.Kvs {
			out = append(out, KeyOf(&res.Kvs[i])+"="+ValueOf(&res.Kvs[i]))
		}
		if !res.More {
			return strings.Join(out, "\n"), rev
		}
		token = *res.NextPageToken
	}
}
