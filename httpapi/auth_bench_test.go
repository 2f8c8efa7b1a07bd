package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/bcrypt"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/keyrange"
)

// authBenchHandler returns the real handler on a fresh store, with auth
// off (no auth store) or enabled, and the token to send (empty when off).
// With auth, the user holds several roles of several permissions, among
// them readwrite on the prefix "bench/", so a check merges and searches a
// realistic set rather than one span.
func authBenchHandler(b *testing.B, withAuth bool) (http.Handler, string) {
	b.Helper()
	backend := storetest.Open(b, embedded.Options{Auth: auth.Config{BcryptCost: bcrypt.MinCost, TokenTTL: time.Hour}})
	if !withAuth {
		return NewHandler(backend, nil, zerolog.Nop(), Config{}), ""
	}
	a := backend.Auth()
	must := func(err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
	}
	must(a.AddUser(auth.RootUser, "root"))
	must(a.GrantRole(auth.RootUser, auth.RootRole))
	must(a.AddUser("u", "pw"))
	for r := range 4 {
		role := fmt.Sprintf("role%d", r)
		must(a.AddRole(role))
		must(a.GrantRole("u", role))
		for p := range 8 {
			key := fmt.Sprintf("r%d/p%d/", r, p)
			must(a.GrantPermission(role, auth.Permission{Key: []byte(key), End: keyrange.PrefixEnd([]byte(key)), Access: auth.Access(1 + p%3)}))
		}
	}
	must(a.GrantPermission("role2", auth.Permission{Key: []byte("bench/"), End: keyrange.PrefixEnd([]byte("bench/")), Access: auth.ReadWrite}))
	must(a.SetEnabled(true))
	tok, _, err := a.Authenticate("u", "pw", "bench")
	must(err)
	return NewHandler(backend, a, zerolog.Nop(), Config{}), tok
}

// authBenchOp is a request of the benchmarks: a get or a put of an
// existing key under "bench/".
type authBenchOp struct {
	name, method, body string
}

var authBenchOps = []authBenchOp{
	{"get", "GET", ""},
	{"put", "PUT", "a value of some thirty-two bytes"},
}

const authBenchTarget = "/v1/kv/bench/key"

// serveAuthBench sends op to h with the Authorization header, if any:
// made once by the caller, so that the loop measures the server's work on
// a token, not the client's.
func serveAuthBench(b *testing.B, h http.Handler, authz []string, op authBenchOp) {
	req := httptest.NewRequest(op.method, authBenchTarget, strings.NewReader(op.body))
	if authz != nil {
		req.Header["Authorization"] = authz
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s %s = %d %s", op.method, authBenchTarget, rec.Code, rec.Body)
	}
}

// BenchmarkAuthOverhead measures what auth adds to a get and a put
// served in-process: the same request with auth off (no auth store), and
// enabled with a token in the Authorization header. The paired runs
// alternate the two, one request each, so that a busy machine slows both
// alike, and report each one's median time per request and the overhead
// of the medians.
//
//	go test -run '^$' -bench AuthOverhead -benchmem -count 5 ./httpapi/
func BenchmarkAuthOverhead(b *testing.B) {
	for _, op := range authBenchOps {
		for _, mode := range []string{"off", "enabled"} {
			b.Run(op.name+"/"+mode, func(b *testing.B) {
				h, tok := authBenchHandler(b, mode == "enabled")
				serveAuthBench(b, h, authBenchBearer(tok), authBenchOp{"", "PUT", "v"})
				authz := authBenchBearer(tok)
				b.ReportAllocs()
				for b.Loop() {
					serveAuthBench(b, h, authz, op)
				}
			})
		}
		b.Run(op.name+"/paired", func(b *testing.B) {
			off, _ := authBenchHandler(b, false)
			on, tok := authBenchHandler(b, true)
			authz := authBenchBearer(tok)
			serveAuthBench(b, off, nil, authBenchOp{"", "PUT", "v"})
			serveAuthBench(b, on, authz, authBenchOp{"", "PUT", "v"})
			var tOff, tOn []time.Duration
			for i := 0; b.Loop(); i++ {
				// Alternate which goes first, so neither always follows
				// the other's garbage.
				onFirst := i%2 == 1
				t0 := time.Now()
				if onFirst {
					serveAuthBench(b, on, authz, op)
				} else {
					serveAuthBench(b, off, nil, op)
				}
				t1 := time.Now()
				if onFirst {
					serveAuthBench(b, off, nil, op)
				} else {
					serveAuthBench(b, on, authz, op)
				}
				t2 := time.Now()
				if onFirst {
					tOn, tOff = append(tOn, t1.Sub(t0)), append(tOff, t2.Sub(t1))
				} else {
					tOff, tOn = append(tOff, t1.Sub(t0)), append(tOn, t2.Sub(t1))
				}
			}
			// Medians: a busy machine's stalls land on either side and
			// would swamp means.
			mOff, mOn := authBenchMedian(tOff), authBenchMedian(tOn)
			b.ReportMetric(float64(mOff.Nanoseconds()), "off-p50-ns")
			b.ReportMetric(float64(mOn.Nanoseconds()), "auth-p50-ns")
			b.ReportMetric(100*(float64(mOn)/float64(mOff)-1), "overhead-%")
		})
	}
}

// authBenchBearer is the Authorization header carrying tok; nil without
// a token.
func authBenchBearer(tok string) []string {
	if tok == "" {
		return nil
	}
	return []string{"Bearer " + tok}
}

func authBenchMedian(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkAuthorize measures the check alone that every request of an
// enabled server passes: token lookup and permission coverage.
func BenchmarkAuthorize(b *testing.B) {
	h, tok := authBenchHandler(b, true)
	z := h.(*Handler).cfg.Authorizer
	req := httptest.NewRequest("GET", authBenchTarget, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	for _, c := range []struct {
		name string
		a    Access
	}{
		{"key", Access{Read: []keyrange.Range{{Key: []byte("bench/key")}}}},
		{"prefix", Access{Read: []keyrange.Range{{Key: []byte("bench/"), End: []byte("bench0")}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := z.Authorize(req, c.a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
