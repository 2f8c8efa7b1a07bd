package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// A put with ttl=N gives the key a lease of its own: granted for N
// seconds, then attached by the put, which answers its ID. A crash
// between the two leaves a lease with no key, which expires by itself;
// the put is never acknowledged without its lease. A put that fails
// (its condition, a missing key for ignore_value) revokes the lease it
// granted before it answers. The key's previous lease, if any, is
// revoked once the put has moved the key off it, unless it still holds
// another key: the embedded store asks inside the revoke's write, a
// gateway over etcd just before it (etcd cannot ask inside), so a key
// attached to that lease in between by someone else goes with it.

// errLeaseInUse stops the revoke of a key's previous lease that holds
// other keys.
var errLeaseInUse = errors.New("the lease holds other keys")

// putWithTTL serves a put with ttl (see putKey), authorized and with its
// value: req is the put, its lease to come.
func (h *Handler) putWithTTL(w http.ResponseWriter, r *http.Request, req *kv.PutRequest, p precondition, ttl int64) {
	sel := keyrange.Range{Key: req.Key}
	op := kv.Op{Put: req}
	l, err := h.cfg.Backend.Grant(r.Context(), 0, ttl)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	req.Lease = l.ID
	// The previous version tells which lease the key leaves; the caller
	// sees it only if it asked (and may read the key).
	answerPrev := req.PrevKV
	req.PrevKV = true
	out, err := h.tryWriteKey(w, r, sel, p, op)
	if err != nil {
		h.revokeQuietly(r, l.ID, nil)
		h.writeError(w, r, err)
		return
	}
	res := out.Put
	if prev := res.PrevKV; prev != nil && prev.Lease != 0 && prev.Lease != l.ID {
		h.revokeQuietly(r, prev.Lease, func(keys [][]byte) error {
			if len(keys) > 0 {
				return errLeaseInUse
			}
			return nil
		})
	}
	setRevision(w, res.Revision)
	w.Header().Set("ETag", etag(res.Revision))
	b := wire.AppendHeader(nil, res.Revision)
	if answerPrev && res.PrevKV != nil {
		b = append(b, `,"prev_kv":`...)
		b = wire.AppendKV(b, res.PrevKV, true)
	}
	b = wire.AppendIntField(b, "lease", l.ID)
	writeRawJSON(w, http.StatusOK, append(b, '}', '\n'))
}

// revokeQuietly revokes a lease a TTL put is done with; guard, if not
// nil, may refuse. A lease already gone, or one the guard keeps, is no
// failure; another failure is logged, and the lease expires by itself.
// It runs after the caller may have gone: the put is done.
func (h *Handler) revokeQuietly(r *http.Request, id int64, guard kv.LeaseGuard) {
	_, err := h.cfg.Backend.Revoke(context.WithoutCancel(r.Context()), id, guard)
	if err != nil && !errors.Is(err, kv.ErrLeaseNotFound) && !errors.Is(err, errLeaseInUse) {
		h.log(r).Warn().Err(err).Int64("lease", id).Msg("a lease a put with ttl left could not be revoked: it expires by itself")
	}
}
