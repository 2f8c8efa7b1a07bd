package etcd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/snapshot"
)

// TestSnapshot: the gateway streams etcd's snapshot of a member, whose
// last 32 bytes are the SHA-256 of the rest; httpkv's snapshot tools read
// it as etcd's (its revision, keys and leases) and refuse to restore it
// into a data directory of httpkv's.
func TestSnapshot(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	ctx := context.Background()
	// A namespace's gateway refuses: the snapshot would hold every
	// other namespace of the cluster.
	if sn, err := openGateway(t, etcdtest.StartCluster(t, 1), "/s/").Snapshot(ctx); !errors.Is(err, kv.ErrSnapshotUnsupported) || !errors.Is(err, kv.ErrNotSupported) || !strings.Contains(err.Error(), `"/s/"`) {
		t.Fatalf("Snapshot of a namespace = %v, %v; want ErrSnapshotUnsupported naming the namespace", sn, err)
	}
	b := openGateway(t, c, "")
	for i := range 30 {
		put(t, b, "k"+strconv.Itoa(i%20), strings.Repeat("v", 100))
	}
	if _, err := b.Grant(ctx, 5, 600); err != nil {
		t.Fatal(err)
	}
	waitMembersAt(t, c, b.Rev())
	sn, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatalf("Snapshot = %v", err)
	}
	defer sn.Close()
	var buf bytes.Buffer
	n, err := sn.WriteTo(&buf)
	if err != nil || n != sn.Size() || int64(buf.Len()) != sn.Size() {
		t.Fatalf("WriteTo = %d, %v; %d bytes; want Size() = %d", n, err, buf.Len(), sn.Size())
	}
	file := filepath.Join(t.TempDir(), "etcd.snapshot")
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := snapshot.Inspect(file)
	if err != nil {
		t.Fatalf("Inspect(etcd's snapshot) = %v", err)
	}
	// 20 keys, the lease's record and the deployment's marker.
	if info.Format != snapshot.FormatEtcd || info.Revision < sn.Revision() || info.Revision != b.Rev() || info.Keys != 22 || info.Leases != 1 {
		t.Errorf("Inspect = %+v, want etcd's format at revision %d (the snapshot's %d at least), 22 keys, 1 lease", info, b.Rev(), sn.Revision())
	}
	if _, err := snapshot.Restore(file, filepath.Join(t.TempDir(), "d"), "httpkv.db"); !errors.Is(err, snapshot.ErrEtcdSnapshot) {
		t.Errorf("Restore(etcd's snapshot) = %v, want ErrEtcdSnapshot", err)
	}
	damaged := bytes.Clone(buf.Bytes())
	damaged[len(damaged)/2] ^= 1
	if err := os.WriteFile(file, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.Inspect(file); !errors.Is(err, snapshot.ErrCorrupt) {
		t.Errorf("Inspect(a damaged etcd snapshot) = %v, want ErrCorrupt", err)
	}
}

// TestBoundedWritingTxn: a txn that writes and whose ranges would answer
// more than MaxResponseBytes is refused before it writes; one within the
// bound runs, and its range reads before its writes.
func TestBoundedWritingTxn(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/b/", func(o *Options) { o.MaxResponseBytes = 64 << 10 })
	ctx := context.Background()
	for i := range 10 {
		put(t, b, "big/"+strconv.Itoa(i), strings.Repeat("v", 10<<10))
	}
	rev := b.Rev()
	limits := &kv.ReadLimits{MaxBytes: 64 << 10}
	txn := func(prefixEnd string) kv.TxnRequest {
		return kv.TxnRequest{Success: []kv.Op{
			{Put: &kv.PutRequest{Key: []byte("written"), Value: []byte("x")}},
			{Range: &kv.RangeOp{Key: []byte("big/"), End: []byte(prefixEnd), Options: kv.RangeOptions{Limits: limits}}},
		}}
	}
	_, err := b.Txn(ctx, txn("big0"), nil)
	var tle *kv.TooLargeError
	if !errors.As(err, &tle) {
		t.Fatalf("Txn(a put and a range of 100 KiB over a bound of 64 KiB) = %v, want a *kv.TooLargeError", err)
	}
	if res, err := b.Range(ctx, kv.RangeRequest{Key: []byte("written")}); err != nil || len(res.KVs) != 0 || b.Rev() != rev {
		t.Fatalf("after the refused txn: %+v, %v, revision %d; want nothing written at %d", res, err, b.Rev(), rev)
	}
	limits = &kv.ReadLimits{MaxBytes: 64 << 10}
	res, err := b.Txn(ctx, txn("big/2"), nil) // big/0, big/1: 20 KiB
	if err != nil || res.Revision != rev+1 || len(res.Responses[1].Range.KVs) != 2 {
		t.Fatalf("Txn(a put and a range of 20 KiB) = %+v, %v; want it at %d with 2 keys", res, err, rev+1)
	}
}

// waitMembersAt waits until every member has applied revision rev.
func waitMembersAt(tb testing.TB, c *etcdtest.Cluster, rev int64) {
	tb.Helper()
	cli := c.Client(tb)
	for _, ep := range c.Endpoints() {
		for deadline := time.Now().Add(recvTimeout); ; time.Sleep(10 * time.Millisecond) {
			st, err := cli.Status(context.Background(), ep)
			if err == nil && st.Header.Revision >= rev {
				break
			}
			if time.Now().After(deadline) {
				tb.Fatalf("%s did not reach revision %d: %v", ep, rev, err)
			}
		}
	}
}

// TestSnapshotOfASharedCluster: the gateway without a namespace refuses a
// snapshot while the cluster holds keys that are none of its deployment's,
// naming one, or has etcd's own auth on (etcd's users are in it): a
// snapshot would hand them to whoever may take one. Before, it streamed
// the whole cluster, every other deployment's auth records included.
func TestSnapshotOfASharedCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "")
	cli := c.Client(t)
	if _, err := cli.Put(ctx, "/other/auth/key", "secret"); err != nil {
		t.Fatal(err)
	}
	if sn, err := b.Snapshot(ctx); !errors.Is(err, kv.ErrNotSupported) || !strings.Contains(err.Error(), `"/other/auth/key"`) {
		t.Fatalf("Snapshot of a cluster holding /other/auth/key = %v, %v; want ErrNotSupported naming it", sn, err)
	}
	if _, err := cli.Delete(ctx, "/other/auth/key"); err != nil {
		t.Fatal(err)
	}
	sn, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatalf("Snapshot of a cluster holding the deployment alone = %v", err)
	}
	sn.Close()

	withAuth := etcdtest.StartCluster(t, 1, etcdtest.WithAuth())
	gw := openGateway(t, withAuth, "", func(o *Options) { o.Username, o.Password = "root", etcdtest.RootPassword })
	if sn, err := gw.Snapshot(ctx); !errors.Is(err, kv.ErrNotSupported) || !strings.Contains(err.Error(), "etcd's own auth is on") {
		t.Errorf("Snapshot of a cluster with etcd's auth on = %v, %v; want ErrNotSupported saying so", sn, err)
	}
}

// TestClusterMaintenanceOfATenant: compaction, defragmentation and
// disarming alarms are the whole cluster's: a gateway of a namespace
// refuses them (kv.ErrNotSupported, naming where they are done), and the
// other deployment's history is intact; with ClusterMaintenance, its
// deployment administers the cluster and they run. Before, a compaction
// through /a/ compacted /b/'s history.
func TestClusterMaintenanceOfATenant(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	ctx := context.Background()
	tenant := openGateway(t, c, "/a/")
	other := openGateway(t, c, "/b/")
	first := put(t, other, "k", "1")
	put(t, other, "k", "2")
	rev := put(t, tenant, "k", "1")
	for name, err := range map[string]error{
		"Compact":      tenant.Compact(ctx, rev, true),
		"Defrag":       func() error { _, err := tenant.Defrag(ctx); return err }(),
		"DisarmAlarms": func() error { _, err := tenant.DisarmAlarms(ctx); return err }(),
	} {
		if !errors.Is(err, kv.ErrClusterWide) || !strings.Contains(err.Error(), `"/a/"`) || !strings.Contains(err.Error(), "etcdctl") && name != "Compact" {
			t.Errorf("%s through a namespace = %v; want ErrNotSupported naming where it is done", name, err)
		}
	}
	res, err := other.Range(ctx, kv.RangeRequest{Key: []byte("k"), Options: kv.RangeOptions{Revision: first}})
	if err != nil || len(res.KVs) != 1 || string(res.KVs[0].Value) != "1" {
		t.Errorf("/b/'s k at %d after /a/'s refused compaction = %+v, %v; want 1", first, res.KVs, err)
	}

	admin := openGateway(t, c, "/ops/", func(o *Options) { o.ClusterMaintenance = true })
	if err := admin.Compact(ctx, rev, false); err != nil {
		t.Errorf("Compact with ClusterMaintenance = %v", err)
	}
	if _, err := admin.Defrag(ctx); err != nil {
		t.Errorf("Defrag with ClusterMaintenance = %v", err)
	}
	if _, err := admin.DisarmAlarms(ctx); err != nil {
		t.Errorf("DisarmAlarms with ClusterMaintenance = %v", err)
	}
	if _, err := other.Range(ctx, kv.RangeRequest{Key: []byte("k"), Options: kv.RangeOptions{Revision: first}}); !errors.Is(err, kv.ErrCompacted) {
		t.Errorf("/b/'s k at %d after the administrator's compaction = %v, want ErrCompacted", first, err)
	}
}
