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
	if sn, err := openGateway(t, c, "/s/").Snapshot(ctx); !errors.Is(err, kv.ErrSnapshotUnsupported) || !errors.Is(err, kv.ErrNotSupported) || !strings.Contains(err.Error(), `"/s/"`) {
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
	// 20 keys and the lease's record.
	if info.Format != snapshot.FormatEtcd || info.Revision < sn.Revision() || info.Revision != b.Rev() || info.Keys != 21 || info.Leases != 1 {
		t.Errorf("Inspect = %+v, want etcd's format at revision %d (the snapshot's %d at least), 21 keys, 1 lease", info, b.Rev(), sn.Revision())
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
