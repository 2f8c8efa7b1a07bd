package etcd

import (
	"context"
	"strconv"
	"testing"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// TestTxnWithoutOpsIsCurrent: a txn with no op in either branch (with
// compares or none) answers the cluster's current revision, and its
// compares see the latest write, whichever member serves it. etcd serves
// such a txn from the member's own state, without asking the leader how
// far the cluster is (etcd's IsTxnSerializable holds of a txn without
// ops), so a follower a little behind answered the revision before a
// write the client had seen acknowledged.
func TestTxnWithoutOpsIsCurrent(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	b := openGateway(t, c, "/rev/")
	ctx := context.Background()
	for i := range 300 {
		v := strconv.Itoa(i)
		rev := put(t, b, "k", v)
		for _, txn := range []kv.TxnRequest{
			{},
			{Compare: []kv.Compare{{Key: []byte("k"), Target: kv.CompareValue, Result: kv.CompareEqual, Value: []byte(v)}}},
		} {
			res, err := b.Txn(ctx, txn, nil)
			if err != nil || res.Revision != rev || len(res.Responses) != 0 || len(txn.Compare) > 0 && !res.Succeeded {
				t.Fatalf("after a put of k=%s at revision %d, Txn(%+v) = %+v, %v; want revision %d, succeeded, no responses",
					v, rev, txn.Compare, res, err, rev)
			}
		}
	}
}
