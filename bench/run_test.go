package bench

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/mvcc"
)

// startHTTPKV serves the real API in process and returns its base URL.
func startHTTPKV(t testing.TB) string {
	t.Helper()
	return startHTTPKVs(t, 1, nil)[0]
}

// startHTTPKVs serves the real API n times over one store, as gateways of
// one cluster do, and returns their base URLs. seen, when set, is called
// with the index of the server and the path of every request.
func startHTTPKVs(t testing.TB, n int, seen func(i int, path string)) []string {
	t.Helper()
	b, err := embedded.Open(t.TempDir(), nil, nil, embedded.Options{Store: mvcc.Options{NoFsync: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	var urls []string
	for i := range n {
		h := httpapi.NewHandler(b, nil, zerolog.Nop(), httpapi.Config{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if seen != nil {
				seen(i, r.URL.Path)
			}
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(func() {
			h.Close() // ends watch streams, so Close does not wait on them
			srv.Close()
		})
		urls = append(urls, srv.URL)
	}
	return urls
}

// runBench runs the tool and returns what it printed.
func runBench(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Run(ctx, args, &out, &errOut); err != nil {
		t.Fatalf("Run(%q) = %v\nstdout:\n%s\nstderr:\n%s", args, err, &out, &errOut)
	}
	return out.String()
}

// row finds the report row of op and returns its count and errors.
func row(t *testing.T, out, op string) (count, errs string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + op + `\s+(\d+)\s+(\d+)\s`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q row in the report:\n%s", op, out)
	}
	return m[1], m[2]
}

// checkWorkloads runs every KV workload and the watch workload once with
// args (the kind and target), and checks that every request succeeded and
// every event was delivered.
func checkWorkloads(t *testing.T, args ...string) {
	t.Helper()
	for _, w := range []string{"put", "get", "range", "txn"} {
		out := runBench(t, append(args, "--workload", w, "--clients", "4", "--requests", "40", "--keys", "20", "--range-keys", "30")...)
		if count, errs := row(t, out, w); count != "40" || errs != "0" {
			t.Errorf("%q %s: %s requests succeeded and %s failed, want 40 and 0:\n%s", args, w, count, errs, out)
		}
	}
	out := runBench(t, append(args, "--workload", "watch", "--watchers", "5", "--clients", "2", "--requests", "20")...)
	if count, errs := row(t, out, "deliver"); count != "100" || errs != "0" {
		t.Errorf("%q watch: %s events delivered and %s missing, want 100 and 0:\n%s", args, count, errs, out)
	}
	checkCatchup(t, args...)
}

// checkCatchup runs the catch-up workload twice on one prefix: the second
// run's watcher starts after the first run's revisions, so it must count
// exactly its own, and a watch that ignored its start revision (and so
// saw none) or started at the first revision of all (and so saw both
// runs') would fail it.
func checkCatchup(t *testing.T, args ...string) {
	t.Helper()
	for range 2 {
		out := runBench(t, append(args, "--workload", "catchup", "--prefix", "catchup/", "--clients", "3", "--requests", "250", "--keys", "7")...)
		if count, errs := row(t, out, "catchup"); count != "250" || errs != "0" {
			t.Errorf("%q catchup: %s events and %s missing, want 250 and 0:\n%s", args, count, errs, out)
		}
	}
}

func TestRunKVWorkloads(t *testing.T) {
	checkWorkloads(t, "--target", startHTTPKV(t))
}

func TestRunWatch(t *testing.T) {
	url := startHTTPKV(t)
	for _, client := range []string{sseLines, sseR3labs} {
		t.Run(client, func(t *testing.T) {
			out := runBench(t, "--target", url, "--workload", "watch", "--sse-client", client, "--prefix", "w-"+client+"/",
				"--watchers", "5", "--clients", "2", "--requests", "20")
			if count, errs := row(t, out, "deliver"); count != "100" || errs != "0" {
				t.Errorf("watch: %s events delivered and %s missing, want 100 and 0:\n%s", count, errs, out)
			}
		})
	}
}

// TestRunWatchTargets: with two targets, the watchers go to each in turn
// and the writers to the first, and every watcher gets every event.
func TestRunWatchTargets(t *testing.T) {
	var mu sync.Mutex
	watches := map[int]int{}
	urls := startHTTPKVs(t, 2, func(i int, path string) {
		if path == "/v1/watch" {
			mu.Lock()
			watches[i]++
			mu.Unlock()
		}
	})
	out := runBench(t, "--target", strings.Join(urls, ","), "--workload", "watch", "--watchers", "5", "--clients", "2", "--requests", "20")
	if count, errs := row(t, out, "deliver"); count != "100" || errs != "0" {
		t.Errorf("watch through two servers: %s events delivered and %s missing, want 100 and 0:\n%s", count, errs, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if watches[0] != 3 || watches[1] != 2 {
		t.Errorf("watches opened on the two servers: %d and %d, want 3 and 2", watches[0], watches[1])
	}
}

// TestRunWatchStreams: the watchers on one stream of many watchers, and
// on two, get every event, as single watches do.
func TestRunWatchStreams(t *testing.T) {
	url := startHTTPKV(t)
	for _, streams := range []string{"1", "2"} {
		t.Run(streams, func(t *testing.T) {
			out := runBench(t, "--target", url, "--workload", "watch", "--watch-streams", streams, "--prefix", "ws-"+streams+"/",
				"--watchers", "5", "--clients", "2", "--requests", "20")
			if count, errs := row(t, out, "deliver"); count != "100" || errs != "0" {
				t.Errorf("watch over %s streams: %s events delivered and %s missing, want 100 and 0:\n%s", streams, count, errs, out)
			}
			if !strings.Contains(out, "watch-streams="+streams) {
				t.Errorf("the report does not say watch-streams=%s:\n%s", streams, out)
			}
			checkCatchup(t, "--target", url, "--watch-streams", streams)
		})
	}
}

func TestReadRSS(t *testing.T) {
	rss, err := readRSS(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Errorf("readRSS(own pid) = %d, %v; want over a MiB", rss, err)
	}
	if _, err := readRSS(-1); err == nil {
		t.Errorf("readRSS(-1) succeeded")
	}
	if _, err := readCPU(os.Getpid()); err != nil {
		t.Errorf("readCPU(own pid) = %v", err)
	}
}

func TestRunFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown kind", []string{"--kind", "consul"}, "--kind"},
		{"unknown workload", []string{"--workload", "scan"}, "--workload"},
		{"value too short for a stamp", []string{"--workload", "watch", "--value-size", "8"}, "--value-size"},
		{"bad target", []string{"--target", "127.0.0.1:2378"}, "--target"},
		{"gRPC over TLS", []string{"--kind", "etcd-grpc", "--target", "https://127.0.0.1:2379"}, "--target"},
		{"no gRPC connection", []string{"--kind", "etcd-grpc", "--grpc-conns", "0"}, "--grpc-conns"},
		{"two targets for a KV workload", []string{"--workload", "put", "--target", "http://127.0.0.1:1,http://127.0.0.1:2"}, "--target"},
		{"a bad second target", []string{"--workload", "watch", "--target", "http://127.0.0.1:1,127.0.0.1:2"}, "--target"},
		{"streams of etcd", []string{"--kind", "etcd", "--workload", "watch", "--watch-streams", "1"}, "--watch-streams"},
		{"catch-up of nothing", []string{"--workload", "catchup", "--duration", "1s"}, "--requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Run(context.Background(), tt.args, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run(%q) = %v, want an error about %s", tt.args, err, tt.want)
			}
		})
	}
}

// TestRunEtcd runs every workload once against a real etcd, through its
// HTTP/JSON gateway and through its gRPC API, to check the request and
// answer shapes of both.
func TestRunEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	url := etcdtest.StartCluster(t, 1).Member(0).ClientURL
	for _, kind := range []string{kindEtcd, kindEtcdGRPC} {
		t.Run(kind, func(t *testing.T) {
			checkWorkloads(t, "--kind", kind, "--target", url)
		})
	}
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
