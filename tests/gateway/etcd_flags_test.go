package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestGatewayRefusesEmbeddedFlags: a gateway started with a flag of the
// embedded store (on the command line or in the environment) does not
// start, and says where the setting lives; one started without them logs
// where its data is (etcd), not a data directory it never uses.
func TestGatewayRefusesEmbeddedFlags(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	gateway := []string{"--listen", "127.0.0.1:0", "--backend", "etcd", "--etcd-endpoints", strings.Join(c.Endpoints(), ",")}
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{append(gateway, "--quota-backend-bytes", "4194304"), nil, "set etcd's --quota-backend-bytes on its members"},
		{gateway, []string{"HTTPKV_DATA_DIR=/data"}, "HTTPKV_DATA_DIR (--data-dir) does not apply to --backend etcd"},
		{[]string{"--listen", "127.0.0.1:0", "--etcd-namespace", "/x/"}, nil, "--etcd-namespace does not apply to --backend embedded"},
	} {
		_, stderr, err := e2e.RunHTTPKV(t, tc.env, tc.args...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !strings.Contains(stderr, tc.want) {
			t.Errorf("httpkv %s (env %q) = %v, stderr %q; want it refused, saying %q", strings.Join(tc.args, " "), tc.env, err, stderr, tc.want)
		}
	}

	s := startGateway(t, c, "/flags/", "--log-level=info")
	// The server has answered /health by now, but its log line may still
	// be in the pipe to the test's copy of its stderr.
	var listening map[string]any
	e2e.Eventually(t, time.Minute, func() (bool, string) {
		for _, line := range strings.Split(s.Stderr.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["message"] == "listening" {
				listening = m
				return true, ""
			}
		}
		return false, fmt.Sprintf("no \"listening\" line in the gateway's stderr:\n%s", s.Stderr)
	})
	if _, ok := listening["data_dir"]; ok || listening["etcd_namespace"] != "/flags/" || listening["etcd_endpoints"] == nil {
		t.Errorf("the gateway logged %v when it listened; want its etcd endpoints and namespace, and no data_dir", listening)
	}
}
