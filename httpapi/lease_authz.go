package httpapi

import (
	"errors"
	"net/http"
	"slices"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

// A put with a lease needs write access to every key already attached to
// the lease, as in etcd: the put keeps those keys alive whenever it keeps
// the lease alive, and ties its key's fate to theirs. The keys are read
// inside the write that puts, so a key attached by a write just before,
// even in the same batch, is checked too.

// unrestricted is an Authorizer that can tell a caller allowed every
// request (auth disabled, or root), for whom a check that must list keys
// is skipped.
type unrestricted interface {
	Unrestricted(r *http.Request) bool
}

func (allowAll) Unrestricted(*http.Request) bool { return true }

// put runs a put, checking its lease's keys inside its write.
func (h *Handler) put(r *http.Request, req kv.PutRequest) (kv.PutResult, error) {
	if req.Lease == 0 {
		return h.cfg.KV.Put(req)
	}
	check := h.leaseCheck(r, []int64{req.Lease})
	return mvcc.Apply(h.cfg.KV, func(tx *mvcc.WriteTxn) (kv.PutResult, error) {
		if err := check(tx); err != nil {
			return kv.PutResult{}, err
		}
		return tx.Put(req)
	})
}

// runTxn runs a txn, checking inside its write the keys of every lease a
// put names, in every branch whichever runs (as etcd does).
func (h *Handler) runTxn(r *http.Request, req kv.TxnRequest) (kv.TxnResult, error) {
	leases := txnLeases(nil, &req)
	if len(leases) == 0 {
		return h.cfg.KV.Txn(req)
	}
	check := h.leaseCheck(r, leases)
	return mvcc.Apply(h.cfg.KV, func(tx *mvcc.WriteTxn) (kv.TxnResult, error) {
		if err := check(tx); err != nil {
			return kv.TxnResult{}, err
		}
		return tx.Txn(req)
	})
}

// txnLeases appends to ids the leases named by the puts of r, nested txns
// included, each once.
func txnLeases(ids []int64, r *kv.TxnRequest) []int64 {
	for _, op := range slices.Concat(r.Success, r.Failure) {
		switch {
		case op.Put != nil && op.Put.Lease != 0 && !slices.Contains(ids, op.Put.Lease):
			ids = append(ids, op.Put.Lease)
		case op.Txn != nil:
			ids = txnLeases(ids, op.Txn)
		}
	}
	return ids
}

// leaseCheck returns what a write runs before its puts: r's caller must
// be allowed to write every key attached to each lease, as the write sees
// them. A lease that does not exist is left to the put to refuse.
func (h *Handler) leaseCheck(r *http.Request, leases []int64) func(*mvcc.WriteTxn) error {
	return func(tx *mvcc.WriteTxn) error {
		if u, ok := h.cfg.Authorizer.(unrestricted); ok && u.Unrestricted(r) {
			return nil
		}
		var a Access
		for _, id := range leases {
			keys, err := tx.LeaseKeys(id)
			if errors.Is(err, kv.ErrLeaseNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			for _, k := range keys {
				a.Write = append(a.Write, keyrange.Range{Key: k})
			}
		}
		if len(a.Write) == 0 {
			return nil
		}
		return h.cfg.Authorizer.Authorize(r, a)
	}
}
