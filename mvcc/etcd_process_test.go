package mvcc

import (
	"net/http"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/etcdtest"
)

// etcdServer is a single-member etcd started for one test and spoken to
// through its HTTP/JSON gRPC gateway: bytes fields travel as base64, int64
// fields as JSON strings, enums by name, and a failed call answers
// {"error": ..., "message": ..., "code": <grpc code>}.
type etcdServer struct {
	url    string
	client *http.Client
}

// startEtcd starts a single-member etcd (the release internal/etcdtest
// pins) with its data in a temporary directory, and stops it on cleanup.
// Without an etcd binary it skips the test, or fails it when CI is set.
func startEtcd(tb testing.TB) *etcdServer {
	tb.Helper()
	c := etcdtest.StartCluster(tb, 1)
	return &etcdServer{url: c.Member(0).ClientURL, client: &http.Client{Timeout: 10 * time.Second}}
}
