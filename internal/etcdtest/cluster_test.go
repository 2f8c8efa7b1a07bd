package etcdtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// retryTimeout bounds how long a test retries a write while the cluster
// elects a leader; only a broken cluster reaches it.
const retryTimeout = 60 * time.Second

// putEventually puts key=value, retrying while the cluster has no quorum
// or no leader, and returns the revision of the put.
func putEventually(t *testing.T, cli *clientv3.Client, key, value string) int64 {
	t.Helper()
	deadline := time.Now().Add(retryTimeout)
	for {
		// Short attempts: one sent to a member just killed waits for
		// its context, not for the election.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := cli.Put(ctx, key, value)
		cancel()
		if err == nil {
			return resp.Header.Revision
		}
		if time.Now().After(deadline) {
			t.Fatalf("Put(%q) still failing after %v: %v", key, retryTimeout, err)
		}
		time.Sleep(pollInterval)
	}
}

// get reads key through cli, linearizably or served by the member alone.
func get(t *testing.T, cli *clientv3.Client, key string, opts ...clientv3.OpOption) (value string, modRev int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, key, opts...)
	if err != nil {
		t.Fatalf("Get(%q) = %v", key, err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("Get(%q) = %d keys, want 1", key, len(resp.Kvs))
	}
	return string(resp.Kvs[0].Value), resp.Kvs[0].ModRevision
}

func TestClusterPutGetOnEveryMember(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, 3)
	if got := len(c.Endpoints()); got != 3 {
		t.Fatalf("Endpoints() has %d URLs, want 3", got)
	}
	rev := putEventually(t, c.Client(t), "k", "v1")
	for i := range c.Size() {
		cli := c.MemberClient(t, i)
		if v, mod := get(t, cli, "k"); v != "v1" || mod != rev {
			t.Errorf("Get(k) through %s = %q at mod revision %d, want v1 at %d", c.Member(i).Name, v, mod, rev)
		}
	}
}

// TestClusterSurvivesKillingTheLeader kills the leader with SIGKILL, writes
// through the two members left once they have elected a new leader, then
// restarts the old leader and checks that it has caught up: a read served
// by it alone (serializable) returns the write it missed.
func TestClusterSurvivesKillingTheLeader(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, 3)
	cli := c.Client(t)
	putEventually(t, cli, "k", "before")
	old := c.Leader()
	c.Kill(old)
	if c.Member(old).Running() {
		t.Fatalf("%s still running after Kill", c.Member(old).Name)
	}
	rev := putEventually(t, cli, "k", "after")
	if l := c.Leader(); l == old {
		t.Fatalf("Leader() = %d after killing it", l)
	}

	c.Restart(old)
	v, mod := get(t, c.MemberClient(t, old), "k", clientv3.WithSerializable())
	if v != "after" || mod != rev {
		t.Errorf("serializable Get(k) through restarted %s = %q at mod revision %d, want %q at %d",
			c.Member(old).Name, v, mod, "after", rev)
	}
	// And the restarted member takes writes again.
	rev = putEventually(t, c.MemberClient(t, old), "k", "again")
	if v, mod := get(t, cli, "k"); v != "again" || mod != rev {
		t.Errorf("Get(k) = %q at %d, want %q at %d", v, mod, "again", rev)
	}
}

// TestClusterStopFollower stops a follower cleanly, writes while it is
// down, and restarts it.
func TestClusterStopFollower(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, 3)
	follower := (c.Leader() + 1) % c.Size()
	c.Stop(follower)
	rev := putEventually(t, c.Client(t), "k", "while stopped")
	c.Restart(follower)
	if v, mod := get(t, c.MemberClient(t, follower), "k", clientv3.WithSerializable()); v != "while stopped" || mod != rev {
		t.Errorf("serializable Get(k) through restarted follower = %q at %d, want %q at %d", v, mod, "while stopped", rev)
	}
}

func TestClusterWithAuth(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, 1, WithAuth())
	putEventually(t, c.Client(t), "k", "v")

	anon, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: dialTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := anon.Get(ctx, "k"); !errors.Is(err, rpctypes.ErrUserEmpty) {
		t.Errorf("Get without credentials = %v, want %v", err, rpctypes.ErrUserEmpty)
	}
}
