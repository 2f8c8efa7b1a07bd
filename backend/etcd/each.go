package etcd

import (
	"context"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/reconcile"
)

// Each calls fn with every key of [key, end) at rev (0: the current
// revision, which the first page pins), in key order, reading the range
// from etcd a page at a time (reconcile.RangeCursor): the gateway holds
// one page, whatever the range's size. It returns the revision it read
// at. etcd counts the rest of the range for every page, as it does for
// any range with a limit; that is etcd's cost, not the gateway's memory.
func (b *Backend) Each(ctx context.Context, key, end []byte, rev int64, fn func(*kv.KeyValue) error) (int64, error) {
	cur := reconcile.NewRangeCursor(ctx, b, keyrange.Range{Key: key, End: end}, rev)
	for {
		e, ok, err := cur.NextKV()
		if err != nil || !ok {
			return cur.Revision(), err
		}
		if err := fn(e); err != nil {
			return cur.Revision(), err
		}
	}
}
