package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
)

// BenchmarkServeRead measures the reads of the load tool's get and range
// workloads served in-process, router, middleware and store included:
// one key, and a list of 1,000 keys of 16-byte keys and 128-byte values.
//
//	go test -run '^$' -bench ServeRead -benchmem ./httpapi/
func BenchmarkServeRead(b *testing.B) {
	h := NewHandler(storetest.Open(b, embedded.Options{}), nil, zerolog.Nop(), Config{})
	value := strings.Repeat("v", 128)
	for i := range 1000 {
		mustServe(b, h, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/bench/%010d", i), value)
	}
	for _, c := range []struct{ name, target string }{
		{"get", "/v1/kv/bench/0000000007"},
		{"list1000", "/v1/kv?key=bench/&prefix=true"},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", c.target, nil)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s = %d %s", c.target, rec.Code, rec.Body)
				}
			}
		})
	}
}
