package embedded

import (
	"context"
	"errors"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

// Range reads one page of a range from one read transaction: from r.From
// when set, and Count the count of the whole range at the same revision.
// The transaction has ended when it returns: the result holds copies.
func (b *Backend) Range(_ context.Context, r kv.RangeRequest) (kv.RangeResult, error) {
	rt, err := b.kv.Read()
	if err != nil {
		return kv.RangeResult{}, err
	}
	defer rt.End()
	res, err := rt.Range(pageStart(r), r.End, r.Options)
	if err != nil {
		return res, err
	}
	if err := countWhole(rt, r, &res); err != nil {
		return kv.RangeResult{}, err
	}
	return res, nil
}

// ViewRange is Range handing the result to fn inside the read
// transaction: its keys and values alias the store's pages, uncopied,
// and are valid during the call only.
func (b *Backend) ViewRange(_ context.Context, r kv.RangeRequest, fn func(*kv.RangeResult) error) error {
	rt, err := b.kv.Read()
	if err != nil {
		return err
	}
	defer rt.End()
	return rt.View(pageStart(r), r.End, r.Options, func(res *kv.RangeResult) error {
		if err := countWhole(rt, r, res); err != nil {
			return err
		}
		return fn(res)
	})
}

// pageStart is where the page of r starts: r.From when set.
func pageStart(r kv.RangeRequest) []byte {
	if r.From != nil {
		return r.From
	}
	return r.Key
}

// countWhole sets res.Count, for a page from r.From, to the count of the
// whole range, at the same revision.
func countWhole(rt *mvcc.ReadTxn, r kv.RangeRequest, res *kv.RangeResult) error {
	if r.From == nil {
		return nil
	}
	all, err := rt.Range(r.Key, r.End, kv.RangeOptions{Revision: r.Options.Revision, CountOnly: true})
	if err != nil {
		return err
	}
	res.Count = all.Count
	return nil
}

// Put writes a key; with a guard and a lease, the guard sees the lease's
// keys inside the write.
func (b *Backend) Put(_ context.Context, r kv.PutRequest, guard kv.LeaseGuard) (kv.PutResult, error) {
	if guard == nil || r.Lease == 0 {
		return b.kv.Put(r)
	}
	return mvcc.Apply(b.kv, func(tx *mvcc.WriteTxn) (kv.PutResult, error) {
		if err := checkLeaseKeys(tx, []int64{r.Lease}, guard); err != nil {
			return kv.PutResult{}, err
		}
		return tx.Put(r)
	})
}

// Delete deletes a key or a range.
func (b *Backend) Delete(_ context.Context, r kv.DeleteRequest) (kv.DeleteResult, error) {
	return b.kv.DeleteRange(r)
}

// Txn runs a txn; one that cannot write runs on a read snapshot. With a
// guard, the guard sees the keys of every lease its puts name inside the
// write.
func (b *Backend) Txn(_ context.Context, r kv.TxnRequest, guard kv.LeaseGuard) (kv.TxnResult, error) {
	var leases []int64
	if guard != nil {
		leases = r.PutLeases()
	}
	if len(leases) == 0 {
		return b.kv.Txn(r)
	}
	return mvcc.Apply(b.kv, func(tx *mvcc.WriteTxn) (kv.TxnResult, error) {
		if err := checkLeaseKeys(tx, leases, guard); err != nil {
			return kv.TxnResult{}, err
		}
		return tx.Txn(r)
	})
}

// checkLeaseKeys asks guard about the keys attached to the leases, as
// the write tx sees them (keys attached by earlier writes of its batch
// included). A lease that does not exist is left to the put to refuse.
func checkLeaseKeys(tx *mvcc.WriteTxn, leases []int64, guard kv.LeaseGuard) error {
	var keys [][]byte
	for _, id := range leases {
		ks, err := tx.LeaseKeys(id)
		if errors.Is(err, kv.ErrLeaseNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		keys = append(keys, ks...)
	}
	if len(keys) == 0 {
		return nil
	}
	return guard(keys)
}

// History reads a page of the store's history.
func (b *Backend) History(_ context.Context, r kv.HistoryRequest) (kv.HistoryPage, error) {
	return b.kv.HistoryPage(r)
}

// Watch starts a watcher on the scheduler.
func (b *Backend) Watch(_ context.Context, r kv.WatchRequest) (kv.WatchStream, error) {
	st, err := b.watch.Watch(r)
	if err != nil {
		return nil, err
	}
	return st, nil
}
