package embedded

import (
	"context"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// Each calls fn with every key of [key, end) alive at rev (0: the
// current revision), in key order, a chunk of the range at a time and
// holding no snapshot while fn runs (see mvcc.Store.Each). It returns
// the revision it read at; ctx, once done, ends it between two keys.
func (b *Backend) Each(ctx context.Context, key, end []byte, rev int64, fn func(*kv.KeyValue) error) (int64, error) {
	return b.kv.Each(keyrange.Range{Key: key, End: end}, rev, func(e *kv.KeyValue) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(e)
	})
}
