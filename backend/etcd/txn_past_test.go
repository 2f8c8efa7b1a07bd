package etcd

import (
	"context"
	"errors"
	"fmt"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// TestTxnPastReadsKeepMembersEqual: a txn that writes and reads at a past
// or future revision answers as etcd's own check says, and leaves every
// member of the cluster in the same state. etcd checks such a read only
// on the member the client is connected to (etcd-io/etcd#18667): sent as
// it is, a txn reading a future revision and deleting a key answered
// "future revision" while the other members deleted the key.
func TestTxnPastReadsKeepMembersEqual(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	b := openGateway(t, c, "/past/", func(o *Options) { o.ClusterMaintenance = true })
	ctx := context.Background()
	first := put(t, b, "k", "1")
	put(t, b, "k", "2")
	compacted := put(t, b, "old", "x")
	if err := b.Compact(ctx, compacted, false); err != nil {
		t.Fatal(err)
	}
	cur := put(t, b, "k", "3")
	del := kv.Op{Delete: &kv.DeleteRequest{Key: []byte("k")}}
	readAt := func(rev int64) kv.Op {
		return kv.Op{Range: &kv.RangeOp{Key: []byte("k"), Options: kv.RangeOptions{Revision: rev}}}
	}
	missing := kv.Op{Put: &kv.PutRequest{Key: []byte("missing"), IgnoreValue: true}}
	for _, tc := range []struct {
		name string
		ops  []kv.Op
		want error // nil: succeeds, k deleted and read at cur as "3"
	}{
		{"future", []kv.Op{readAt(cur + 5), del}, kv.ErrFutureRevision},
		{"compacted", []kv.Op{readAt(first), del}, kv.ErrCompacted},
		{"nested future", []kv.Op{{Txn: &kv.TxnRequest{Success: []kv.Op{readAt(cur + 5)}}}, del}, kv.ErrFutureRevision},
		{"a failing put first", []kv.Op{missing, readAt(cur + 5), del}, kv.ErrKeyNotFound},
		{"a failing put after", []kv.Op{readAt(cur + 5), missing, del}, kv.ErrFutureRevision},
		{"valid", []kv.Op{readAt(cur), del}, nil},
	} {
		res, err := b.Txn(ctx, kv.TxnRequest{Success: tc.ops}, nil)
		switch {
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: Txn = %+v, %v; want %v", tc.name, res, err, tc.want)
		case tc.want == nil && (err != nil || len(res.Responses) != 2 || len(res.Responses[0].Range.KVs) != 1 ||
			string(res.Responses[0].Range.KVs[0].Value) != "3" || res.Responses[0].Range.Revision != cur):
			t.Errorf("%s: Txn = %+v, %v; want k=3 read at %d, then deleted", tc.name, res, err, cur)
		}
		states := membersState(t, c, "/past/kv/k")
		for i := range states {
			if states[i] != states[0] {
				t.Fatalf("%s: members disagree after the txn: %q", tc.name, states)
			}
		}
	}
}

// membersState reads key and the revision from each member, with a
// linearizable read, which a member answers once it has applied what the
// cluster committed before.
func membersState(tb testing.TB, c *etcdtest.Cluster, key string) []string {
	tb.Helper()
	var out []string
	for i := range c.Size() {
		resp, err := c.MemberClient(tb, i).Get(context.Background(), key, clientv3.WithCountOnly())
		if err != nil {
			tb.Fatalf("member %d: Get(%q) = %v", i, key, err)
		}
		out = append(out, fmt.Sprintf("revision %d, %d keys", resp.Header.Revision, resp.Count))
	}
	return out
}
