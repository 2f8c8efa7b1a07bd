package patch

import (
	"context"

	"github.com/httpkv/httpkv/kv"
)

// Attempts bounds how many times Update reads the key again because it
// changed between the read and the write.
const Attempts = 8

// Store is what Update needs of a backend.
type Store interface {
	Range(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error)
	Txn(ctx context.Context, r kv.TxnRequest, guard kv.LeaseGuard) (kv.TxnResult, error)
}

// ChangedError is Update's failure when the key's mod revision is not
// the one IfMatch asked for: Current is the key as it is (nil when it
// does not exist), at Revision.
type ChangedError struct {
	Current  *kv.KeyValue
	Revision int64
}

func (e *ChangedError) Error() string { return "the key is not at the revision of If-Match" }

// Request is an Update of Key.
type Request struct {
	Key []byte
	// IfMatch, when not 0, is the mod revision the key must have; -1
	// asks only that the key exists.
	IfMatch int64
	// Next computes the key's new value from its current one (nil when
	// it does not exist).
	Next func(cur *kv.KeyValue) ([]byte, error)
}

// Result is what Update wrote.
type Result struct {
	// KV is the key as written.
	KV kv.KeyValue
	// Revision is the revision of the write.
	Revision int64
}

// Update reads r.Key, computes its new value with r.Next, and writes it
// in a txn that compares the key's mod revision with the one read (0 for
// a key that did not exist), keeping the key's lease. When the compare
// fails, the txn's failure branch has read the key again, and Update
// computes from that, Attempts times at most; then it fails with
// kv.ErrUnavailable. With IfMatch, a key at another revision fails with
// a *ChangedError instead, at once.
func Update(ctx context.Context, s Store, r Request) (Result, error) {
	res, err := s.Range(ctx, kv.RangeRequest{Key: r.Key})
	if err != nil {
		return Result{}, err
	}
	cur, rev := first(res.KVs), res.Revision
	for range Attempts {
		if !matches(r.IfMatch, cur) {
			return Result{}, &ChangedError{Current: cur, Revision: rev}
		}
		value, err := r.Next(cur)
		if err != nil {
			return Result{}, err
		}
		put := kv.PutRequest{Key: r.Key, Value: value}
		var mod int64
		if cur != nil {
			put.IgnoreLease = true
			mod = cur.ModRevision
		}
		read := kv.Op{Range: &kv.RangeOp{Key: r.Key}}
		out, err := s.Txn(ctx, kv.TxnRequest{
			Compare: []kv.Compare{{Key: r.Key, Target: kv.CompareMod, Result: kv.CompareEqual, Number: mod}},
			Success: []kv.Op{{Put: &put}, read},
			Failure: []kv.Op{read},
		}, nil)
		if err != nil {
			return Result{}, err
		}
		if out.Succeeded {
			written := first(out.Responses[1].Range.KVs)
			if written == nil {
				return Result{}, kv.Errorf(kv.ErrUnavailable, "the key %q was not there right after its write", r.Key)
			}
			return Result{KV: *written, Revision: out.Revision}, nil
		}
		cur, rev = first(out.Responses[0].Range.KVs), out.Revision
	}
	return Result{}, kv.Errorf(kv.ErrUnavailable, "the key %q changed %d times while the patch was applied: retry", r.Key, Attempts)
}

func first(kvs []kv.KeyValue) *kv.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	return &kvs[0]
}

// matches reports whether the key as it is meets If-Match.
func matches(ifMatch int64, cur *kv.KeyValue) bool {
	switch {
	case ifMatch == 0:
		return true
	case cur == nil:
		return false
	case ifMatch < 0:
		return true
	}
	return cur.ModRevision == ifMatch
}
