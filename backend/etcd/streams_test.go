package etcd

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
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

	if ok, err := b.CreateStreamRecord(ctx, "one", "alice", []byte("v1"), kv.StreamWatchers{Live: 3}, time.Minute); err != nil || !ok {
		t.Fatalf("create = %v, %v", ok, err)
	}
	if ok, err := b.CreateStreamRecord(ctx, "one", "bob", []byte("x"), kv.StreamWatchers{Live: 1}, time.Minute); err != nil || ok {
		t.Fatalf("create of a taken id = %v, %v; want false", ok, err)
	}
	if ok, err := b.CreateStreamRecord(ctx, "two", "alice", []byte("w"), kv.StreamWatchers{Live: 2}, time.Minute); err != nil || !ok {
		t.Fatalf("create two = %v, %v", ok, err)
	}
	if c, err := b.CountStreamRecords(ctx, "alice"); err != nil || c.Streams != 2 || c.GroupStreams != 2 || c.Watchers != 5 || c.GroupWatchers != 5 {
		t.Fatalf("count = %+v, %v; want 2 streams and 5 watchers, all alice's", c, err)
	}
	if c, err := b.CountStreamRecords(ctx, "bob"); err != nil || c.Streams != 2 || c.GroupStreams != 0 || c.Watchers != 5 || c.GroupWatchers != 0 {
		t.Fatalf("count for bob = %+v, %v; want 2 streams and 5 watchers, none bob's", c, err)
	}
	if c, err := other.CountStreamRecords(ctx, "alice"); err != nil || c.Streams != 0 || c.Watchers != 0 {
		t.Fatalf("another namespace's count = %+v, %v; want none", c, err)
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
	v2, ok, err := b.UpdateStreamRecord(ctx, "one", "alice", []byte("v2"), kv.StreamWatchers{Live: 1}, v1)
	if err != nil || !ok || v2 <= v1 {
		t.Fatalf("update = %d, %v, %v", v2, ok, err)
	}
	if _, ok, err := b.UpdateStreamRecord(ctx, "one", "alice", []byte("stale"), kv.StreamWatchers{Live: -1}, v1); err != nil || ok {
		t.Fatalf("update from a stale version = %v, %v; want false", ok, err)
	}
	if c, err := b.CountStreamRecords(ctx, "alice"); err != nil || c.Watchers != 3 {
		t.Fatalf("count after an update to 1 watcher = %+v, %v; want 3 watchers", c, err)
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
	if c, err := b.CountStreamRecords(ctx, "alice"); err != nil || c.Streams != 1 || c.GroupStreams != 1 || c.Watchers != 2 {
		t.Fatalf("count after a delete = %+v, %v; want 1 stream of 2 watchers", c, err)
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
	if ok, err := b.CreateStreamRecord(ctx, "idle", "alice", []byte("v"), kv.StreamWatchers{Live: 1}, time.Second); err != nil || !ok {
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
	if c, err := b.CountStreamRecords(ctx, "alice"); err != nil || c.Streams != 0 || c.Watchers != 0 {
		t.Fatalf("count after the expiry = %+v, %v; want none", c, err)
	}
}

// TestStreamRecordCountsConditional: a change made as of counts read
// before another gateway's change is refused, so that two gateways
// adding watchers at once cannot both pass a bound; one made as of the
// newest counts, or unconditional, goes through.
func TestStreamRecordCountsConditional(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	one, two := openGateway(t, c, "/s/"), openGateway(t, c, "/s/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if ok, err := one.CreateStreamRecord(ctx, "a", "alice", []byte("a1"), kv.StreamWatchers{Live: 1}, time.Minute); err != nil || !ok {
		t.Fatalf("create a = %v, %v", ok, err)
	}
	_, va, err := one.StreamRecord(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	seen, err := one.CountStreamRecords(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	// The other gateway adds a stream after the count was read.
	if ok, err := two.CreateStreamRecord(ctx, "b", "bob", []byte("b1"), kv.StreamWatchers{Live: 4, AsOf: seen.AsOf}, time.Minute); err != nil || !ok {
		t.Fatalf("create b as of the newest counts = %v, %v", ok, err)
	}
	if _, ok, err := one.UpdateStreamRecord(ctx, "a", "alice", []byte("a2"), kv.StreamWatchers{Live: 2, AsOf: seen.AsOf}, va); err != nil || ok {
		t.Fatalf("an add as of counts another gateway changed since = %v, %v; want refused", ok, err)
	}
	if ok, err := one.CreateStreamRecord(ctx, "c", "alice", []byte("c1"), kv.StreamWatchers{Live: 1, AsOf: seen.AsOf}, time.Minute); err != nil || ok {
		t.Fatalf("a create as of stale counts = %v, %v; want refused", ok, err)
	}
	now, err := one.CountStreamRecords(ctx, "alice")
	if err != nil || now.Watchers != 5 || now.GroupWatchers != 1 || now.Streams != 2 {
		t.Fatalf("counts = %+v, %v; want 2 streams, 5 watchers, alice's 1", now, err)
	}
	if _, ok, err := one.UpdateStreamRecord(ctx, "a", "alice", []byte("a2"), kv.StreamWatchers{Live: 2, AsOf: now.AsOf}, va); err != nil || !ok {
		t.Fatalf("an add as of the newest counts = %v, %v", ok, err)
	}
	if c, err := two.CountStreamRecords(ctx, "alice"); err != nil || c.Watchers != 6 || c.GroupWatchers != 2 {
		t.Fatalf("counts = %+v, %v; want 6 watchers, alice's 2", c, err)
	}
}
