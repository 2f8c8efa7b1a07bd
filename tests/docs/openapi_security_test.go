package docs

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi"
	"github.com/httpkv/httpkv/tests/e2e"
)

// pathParam matches a parameter of a path template.
var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// TestOpenAPISecurityAsServed: with auth enabled, every operation the
// document declares public (security: []) answers a caller without a
// token, and every other refuses it with 401. A generated client sends a
// token exactly where the document says one is needed.
func TestOpenAPISecurityAsServed(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := e2e.StartServer(t, "--bcrypt-cost=4")
	e2e.EnableAuth(t, s, "pw")
	var public []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security == nil {
				t.Errorf("%s %s declares no security", method, path)
				continue
			}
			target := pathParam.ReplaceAllString(path, "x")
			var body []byte
			if method == http.MethodPost || method == http.MethodPut {
				body = []byte("{}")
			}
			r := s.Do(t, method, target, body, "Content-Type", "application/json")
			if len(*op.Security) == 0 {
				public = append(public, method+" "+path)
				if r.Status == http.StatusUnauthorized {
					t.Errorf("%s %s is public in the document (security: []), but %s without a token answers 401", method, path, target)
				}
				continue
			}
			if r.Status != http.StatusUnauthorized {
				t.Errorf("%s %s needs a token in the document, but %s without one answers %d %s", method, path, target, r.Status, e2e.Clip(r.Body))
			}
		}
	}
	slices.Sort(public)
	t.Logf("public operations: %s", strings.Join(public, ", "))
}
