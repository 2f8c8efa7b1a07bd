package gateway

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// outageBound bounds how long a gateway takes to answer while etcd cannot
// serve, and to serve again once it can: the contract says 2 s; the bound
// leaves room for a loaded machine (a load average of 27 on 2 cores, the
// server built with -race) while staying below the request timeout of the
// gateways below (a minute), which is what a gateway without its prober
// would wait.
const outageBound = 30 * time.Second

// TestGatewayHealthAnswers: with every member of its cluster killed, or
// two of three (no quorum), a gateway answers a read and /health at once
// with 503 saying that etcd cannot serve and why, rather than after its
// request timeout; `httpkv health` prints that reason; and once the
// members are back, /health is 200 again at once.
func TestGatewayHealthAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		kill []int // members to kill, of 3
	}{
		{"every member killed", []int{0, 1, 2}},
		{"no quorum", []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := etcdtest.StartCluster(t, 3)
			s := startGateway(t, c, "/health/", "--etcd-request-timeout=1m")
			s.Put(t, "x", "1")
			for _, i := range tc.kill {
				c.Kill(i)
			}
			for _, path := range []string{"/v1/kv/x", "/health"} {
				start := time.Now()
				r := s.Do(t, "GET", path, nil)
				took := time.Since(start)
				t.Logf("GET %s with %s: %d in %v", path, tc.name, r.Status, took)
				var msg string
				if path == "/health" {
					var h client.Health
					r.Decode(t, &h)
					msg = e2e.Deref(h.Reason)
				} else {
					msg = r.WantError(t, http.StatusServiceUnavailable, "unavailable").Message
				}
				if r.Status != http.StatusServiceUnavailable || !strings.Contains(msg, "etcd cannot serve: of 3 members") || took > outageBound {
					t.Errorf("GET %s with %s = %d %s after %v; want 503 naming etcd and what failed, within %v",
						path, tc.name, r.Status, r.Body, took, outageBound)
				}
			}
			out, err := exec.Command(e2e.ServerBinary(t), "health", "--url", s.URL+"/health").CombinedOutput()
			if err == nil || !strings.Contains(string(out), "unhealthy (503 Service Unavailable): backend unavailable: etcd cannot serve") {
				t.Errorf("httpkv health with %s = %v, %s; want exit 1 with the reason", tc.name, err, out)
			}

			c.RestartAll(tc.kill...)
			back := time.Now()
			for {
				ctx, cancel := context.WithTimeout(context.Background(), e2e.RequestTimeout)
				r, err := s.Send(ctx, "GET", "/health", nil)
				cancel()
				if err == nil && r.Status == http.StatusOK {
					t.Logf("/health 200 %v after the members answer again", time.Since(back))
					break
				}
				if time.Since(back) > outageBound {
					t.Fatalf("/health %v after the members answer again: %v %v", time.Since(back), r, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			var got client.GetResponse
			s.Do(t, "GET", "/v1/kv/x", nil).Ok(t, http.StatusOK, &got)
			if v := e2e.ValueOf(&got.Kv); v != "1" {
				t.Fatalf("x = %q after the outage, want 1", v)
			}
		})
	}
}
