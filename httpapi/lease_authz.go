package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// A put with a lease needs write access to every key already attached to
// the lease, as in etcd: the put keeps those keys alive whenever it keeps
// the lease alive, and ties its key's fate to theirs. The backend reads
// the keys inside the write that puts and asks the request's guard about
// them, so a key attached by a write just before, even in the same
// batch, is checked too. A revoke asks the same guard about the keys it
// deletes.

// unrestricted is an Authorizer that can tell a caller allowed every
// request (auth disabled, or root), for whom a check that must list keys
// is skipped.
type unrestricted interface {
	Unrestricted(r *http.Request) bool
}

func (allowAll) Unrestricted(*http.Request) bool { return true }

// leaseGuard returns what a write asks about keys it touches through
// leases: r's caller must be allowed to write every one. It is nil for a
// caller allowed everything.
func (h *Handler) leaseGuard(r *http.Request) kv.LeaseGuard {
	if u, ok := h.cfg.Authorizer.(unrestricted); ok && u.Unrestricted(r) {
		return nil
	}
	return func(keys [][]byte) error {
		a := Access{Write: make([]keyrange.Range, len(keys))}
		for i, k := range keys {
			a.Write[i] = keyrange.Single(k)
		}
		return h.cfg.Authorizer.Authorize(r, a)
	}
}
