package etcd

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
)

// TestStreamRecords: a stream's record is made once per id, changed only
// from the version it was read at, followed through every change to its
// deletion, counted per owner, on a lease the deployment does not list,
// and invisible to the API's keys and to another namespace.
func TestStreamRecords(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/s/")
	other := openGateway(t, c, "/t/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if ok, err := b.CreateStreamRecord(ctx, "one", "alice", []byte("v1"), time.Minute); err != nil || !ok {
		t.Fatalf("create = %v, %v", ok, err)
	}
	if ok, err := b.CreateStreamRecord(ctx, "one", "bob", []byte("x"), time.Minute); err != nil || ok {
		t.Fatalf("create of a taken id = %v, %v; want false", ok, err)
	}
	if ok, err := b.CreateStreamRecord(ctx, "two", "alice", []byte("w"), time.Minute); err != nil || !ok {
		t.Fatalf("create two = %v, %v", ok, err)
	}
	if total, mine, err := b.CountStreamRecords(ctx, "alice"); err != nil || total != 2 || mine != 2 {
		t.Fatalf("count = %d, %d, %v; want 2, 2", total, mine, err)
	}
	if total, mine, err := other.CountStreamRecords(ctx, "alice"); err != nil || total != 0 || mine != 0 {
		t.Fatalf("another namespace's count = %d, %d, %v; want 0, 0", total, mine, err)
	}
	if data, _, err := other.StreamRecord(ctx, "one"); err != nil || data != nil {
		t.Fatalf("another namespace reads %q, %v", data, err)
	}
	data, v1, err := b.StreamRecord(ctx, "one")
	if err != nil || string(data) != "v1" {
		t.Fatalf("read = %q, %v", data, err)
	}
	if ids, _, err := b.Leases(ctx, 0, 100); err != nil || len(ids) != 0 {
		t.Fatalf("the deployment's leases = %v, %v; want none (the streams' are not the API's)", ids, err)
	}
	if kvs, err := b.kv.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithCountOnly()); err != nil || kvs.Count != 0 {
		t.Fatalf("the API's keys hold %v, %v", kvs, err)
	}

	seen := make(chan string, 8)
	followed := make(chan error, 1)
	go func() {
		followed <- b.FollowStreamRecord(ctx, "one", v1, func(data []byte, version int64) bool {
			if data == nil {
				seen <- "deleted"
			} else {
				seen <- string(data)
			}
			return true
		})
	}()
	v2, ok, err := b.UpdateStreamRecord(ctx, "one", []byte("v2"), v1)
	if err != nil || !ok || v2 <= v1 {
		t.Fatalf("update = %d, %v, %v", v2, ok, err)
	}
	if _, ok, err := b.UpdateStreamRecord(ctx, "one", []byte("stale"), v1); err != nil || ok {
		t.Fatalf("update from a stale version = %v, %v; want false", ok, err)
	}
	if got := <-seen; got != "v2" {
		t.Fatalf("followed %q, want v2", got)
	}
	if alive, err := b.TouchStreamRecord(ctx, "one"); err != nil || !alive {
		t.Fatalf("touch = %v, %v", alive, err)
	}
	if ok, err := b.DeleteStreamRecord(ctx, "one", v1); err != nil || ok {
		t.Fatalf("delete at a stale version = %v, %v; want false", ok, err)
	}
	if ok, err := b.DeleteStreamRecord(ctx, "one", v2); err != nil || !ok {
		t.Fatalf("delete = %v, %v", ok, err)
	}
	if got := <-seen; got != "deleted" {
		t.Fatalf("followed %q, want deleted", got)
	}
	if err := <-followed; err != nil {
		t.Fatalf("follow ended with %v after the deletion", err)
	}
	if alive, err := b.TouchStreamRecord(ctx, "one"); err != nil || alive {
		t.Fatalf("touch of a deleted record = %v, %v; want false", alive, err)
	}
	// Its owner key went with its lease.
	if total, mine, err := b.CountStreamRecords(ctx, "alice"); err != nil || total != 1 || mine != 1 {
		t.Fatalf("count after a delete = %d, %d, %v; want 1, 1", total, mine, err)
	}
	if ok, err := other.DeleteStreamRecord(ctx, "two", 0); err != nil || ok {
		t.Fatalf("another namespace deletes = %v, %v; want false", ok, err)
	}
}

// TestStreamRecordExpires: a record whose lease is not renewed is gone
// after its idle timeout and a second, owner key included.
func TestStreamRecordExpires(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/s/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if ok, err := b.CreateStreamRecord(ctx, "idle", "alice", []byte("v"), time.Second); err != nil || !ok {
		t.Fatalf("create = %v, %v", ok, err)
	}
	for {
		data, _, err := b.StreamRecord(ctx, "idle")
		if err != nil {
			t.Fatal(err)
		}
		if data == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the record outlived its lease")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if total, mine, err := b.CountStreamRecords(ctx, "alice"); err != nil || total != 0 || mine != 0 {
		t.Fatalf("count after the expiry = %d, %d, %v; want 0, 0", total, mine, err)
	}
}
