package embedded

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/watch"
)

// Backend is a concurrency.Backend over a watch.Store.
type Backend struct {
	store *watch.Store
	alive func(lease int64) bool
}

// New returns the backend over store; alive tells whether a lease is
// alive (the lessor knows).
func New(store *watch.Store, alive func(lease int64) bool) *Backend {
	return &Backend{store: store, alive: alive}
}

// Txn runs t through the store's write path, so that its writes reach
// watchers; a txn that cannot write runs on a read snapshot.
func (b *Backend) Txn(_ context.Context, t concurrency.Txn) (concurrency.TxnResult, error) {
	req := mvcc.TxnRequest{Compare: make([]mvcc.Compare, len(t.If)), Success: ops(t.Then), Failure: ops(t.Else)}
	for i, c := range t.If {
		target := mvcc.CompareCreate
		if c.Target == concurrency.CompareLease {
			target = mvcc.CompareLease
		}
		req.Compare[i] = mvcc.Compare{Key: c.Key, Target: target, Result: mvcc.CompareEqual, Number: c.Value}
	}
	res, err := b.txn(req, t)
	if err != nil {
		return concurrency.TxnResult{}, convert(err)
	}
	out := concurrency.TxnResult{Succeeded: res.Succeeded, Revision: res.Revision}
	for _, r := range res.Responses {
		if r.Range == nil {
			continue
		}
		var kv *concurrency.KeyValue
		if len(r.Range.KVs) > 0 {
			kv = keyValue(&r.Range.KVs[0])
		}
		out.Gets = append(out.Gets, kv)
	}
	return out, nil
}

// txn runs req, calling t.CheckLeases, if set, inside the same write.
func (b *Backend) txn(req mvcc.TxnRequest, t concurrency.Txn) (mvcc.TxnResult, error) {
	if t.CheckLeases == nil {
		return b.store.Txn(req)
	}
	return mvcc.Apply(b.store, func(tx *mvcc.WriteTxn) (mvcc.TxnResult, error) {
		var keys [][]byte
		for _, op := range slices.Concat(t.Then, t.Else) {
			if op.Type != concurrency.OpPut || op.Lease == 0 {
				continue
			}
			ks, err := tx.LeaseKeys(op.Lease)
			if err != nil && !errors.Is(err, mvcc.ErrLeaseNotFound) {
				return mvcc.TxnResult{}, err
			}
			keys = append(keys, ks...)
		}
		if err := t.CheckLeases(keys); err != nil {
			return mvcc.TxnResult{}, err
		}
		return tx.Txn(req)
	})
}

func ops(in []concurrency.Op) []mvcc.Op {
	out := make([]mvcc.Op, len(in))
	for i, op := range in {
		switch op.Type {
		case concurrency.OpGet:
			out[i].Range = &mvcc.RangeOp{Key: op.Key}
		case concurrency.OpPut:
			out[i].Put = &mvcc.PutRequest{Key: op.Key, Value: op.Value, Lease: op.Lease}
		case concurrency.OpDelete:
			out[i].Delete = &mvcc.DeleteRequest{Key: op.Key}
		}
	}
	return out
}

// Range reads the store.
func (b *Backend) Range(_ context.Context, r concurrency.RangeRequest) (concurrency.RangeResult, error) {
	opts := mvcc.RangeOptions{
		Revision:          r.Revision,
		Limit:             r.Limit,
		SortTarget:        mvcc.SortByCreate,
		SortOrder:         mvcc.SortAscend,
		MaxCreateRevision: r.MaxCreateRevision,
	}
	if r.Order == concurrency.NewestFirst {
		opts.SortOrder = mvcc.SortDescend
	}
	res, err := b.store.KV().Range(r.Key, r.End, opts)
	if err != nil {
		return concurrency.RangeResult{}, convert(err)
	}
	out := concurrency.RangeResult{KVs: make([]concurrency.KeyValue, len(res.KVs)), Revision: res.Revision}
	for i := range res.KVs {
		out.KVs[i] = *keyValue(&res.KVs[i])
	}
	return out, nil
}

// Watch starts a watcher on the store.
func (b *Backend) Watch(_ context.Context, r concurrency.WatchRequest) (concurrency.Watcher, error) {
	st, err := b.store.Watch(watch.Request{Key: r.Key, End: r.End, StartRevision: r.StartRevision})
	if err != nil {
		return nil, convert(err)
	}
	return &watcher{st: st}, nil
}

// LeaseExists asks the lessor.
func (b *Backend) LeaseExists(_ context.Context, id int64) (bool, error) {
	return b.alive(id), nil
}

// watcher adapts a watch.Stream.
type watcher struct {
	st *watch.Stream
}

func (w *watcher) Ready() <-chan struct{} { return w.st.Ready() }
func (w *watcher) Close()                 { w.st.Close() }

func (w *watcher) Next() ([]concurrency.Event, error) {
	// What Next takes counts against the watcher's byte bound until
	// released; the events are used at once, so release it on return.
	defer w.st.Release()
	var out []concurrency.Event
	for _, r := range w.st.Next() {
		switch {
		case r.CompactRevision != 0:
			return out, convert(&mvcc.CompactedError{CompactRevision: r.CompactRevision})
		case r.Canceled:
			return out, fmt.Errorf("%w: %s", concurrency.ErrWatchEnded, r.CancelReason)
		}
		for _, ev := range r.Events {
			typ := concurrency.EventPut
			if ev.Type == mvcc.EventDelete {
				typ = concurrency.EventDelete
			}
			out = append(out, concurrency.Event{Type: typ, KV: *keyValue(&ev.KV)})
		}
	}
	return out, nil
}

func keyValue(kv *mvcc.KeyValue) *concurrency.KeyValue {
	return &concurrency.KeyValue{
		Key: kv.Key, Value: kv.Value,
		CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision,
		Version: kv.Version, Lease: kv.Lease,
	}
}

// convert marks the store's compaction error as the package's, keeping
// it (and its compact revision) inside; the other errors keep their own
// sentinels, which the API maps.
func convert(err error) error {
	if errors.Is(err, mvcc.ErrCompacted) {
		return fmt.Errorf("%w: %w", concurrency.ErrCompacted, err)
	}
	return err
}
