package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/internal/etcdtest"
)

// openErr opens a gateway to c under namespace ns, and returns Open's
// error; a gateway that opens is closed when the test ends.
func openErr(tb testing.TB, c *etcdtest.Cluster, ns string) error {
	tb.Helper()
	b, err := Open(context.Background(), nil, Options{Endpoints: c.Endpoints(), Namespace: ns, Auth: authConfig()})
	if err == nil {
		tb.Cleanup(func() { b.Close() })
	}
	return err
}

// wantOverlap fails unless err is ErrOverlap naming what.
func wantOverlap(tb testing.TB, ns string, err error, what string) {
	tb.Helper()
	if !errors.Is(err, ErrOverlap) || !strings.Contains(err.Error(), what) {
		tb.Errorf("Open(%q) = %v; want ErrOverlap naming %s", ns, err, what)
	}
}

// TestDeploymentsDoNotOverlap: a gateway refuses a namespace that lies
// inside another deployment's, holds one, or holds keys that are no
// httpkv's, naming the other; side by side, deployments open; one made
// before markers gets its marker. Before, /b/kv/ and /b opened beside
// /b/, and their keys landed among /b/'s keys and private records.
func TestDeploymentsDoNotOverlap(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	cli := c.Client(t)
	ctx := context.Background()
	put(t, openGateway(t, c, "/b/"), "k", "v")
	for _, ns := range []string{"/b/kv/", "/b/auth/", "/b/x", "/b/kv/x/"} {
		wantOverlap(t, ns, openErr(t, c, ns), `lies inside the deployment of namespace "/b/"`)
	}
	for _, ns := range []string{"/b", "/", ""} {
		wantOverlap(t, ns, openErr(t, c, ns), `covers the deployment of namespace "/b/"`)
	}
	if err := openErr(t, c, "/c/"); err != nil {
		t.Errorf("Open(/c/) beside /b/ = %v", err)
	}
	openGateway(t, c, "/b/") // again: its own marker

	// Nested first: the enclosing one is refused.
	openGateway(t, c, "/x/kv/y/")
	wantOverlap(t, "/x/", openErr(t, c, "/x/"), `covers the deployment of namespace "/x/kv/y/"`)

	// Keys that are no deployment's own.
	if _, err := cli.Put(ctx, "/g/other", "v"); err != nil {
		t.Fatal(err)
	}
	wantOverlap(t, "/g/", openErr(t, c, "/g/"), `holds "/g/other"`)

	// A deployment made before markers: its own sub-prefixes only.
	for _, k := range []string{"/old/kv/a", "/old/auth/rev", "/old/lease/0000000000000001"} {
		if _, err := cli.Put(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	openGateway(t, c, "/old/")
	if resp, err := cli.Get(ctx, "/old/deployment"); err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != `{"namespace":"/old/"}` {
		t.Errorf("/old/'s marker = %v, %v", resp, err)
	}
	wantOverlap(t, "/old/kv/", openErr(t, c, "/old/kv/"), `the deployment of namespace "/old/"`)
}

// TestNoNamespaceHoldsEverything: the deployment without a namespace
// covers the whole key space: it opens on a cluster that holds nothing
// else, and then no namespace opens beside it.
func TestNoNamespaceHoldsEverything(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	put(t, openGateway(t, c, ""), "k", "v")
	openGateway(t, c, "")
	for _, ns := range []string{"/a/", "kv/x/", "a"} {
		wantOverlap(t, ns, openErr(t, c, ns), `the deployment without a namespace`)
	}
}

// TestOverlappingDeploymentsAtOnce: of an enclosing and an enclosed
// namespace opened at once, on an empty cluster, at most one opens.
func TestOverlappingDeploymentsAtOnce(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	for round := range 10 {
		outer := fmt.Sprintf("/r%d/", round)
		pair := []string{outer, outer + "kv/in/"}
		errs := make([]error, len(pair))
		var wg sync.WaitGroup
		for i, ns := range pair {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = openErr(t, c, ns)
			}()
		}
		wg.Wait()
		if errs[0] == nil && errs[1] == nil {
			t.Errorf("round %d: %q and %q both opened at once", round, pair[0], pair[1])
		}
		for i, err := range errs {
			if err != nil && !errors.Is(err, ErrOverlap) {
				t.Errorf("round %d: Open(%q) = %v, want nil or ErrOverlap", round, pair[i], err)
			}
		}
	}
}
