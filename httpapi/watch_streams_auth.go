package httpapi

import (
	"errors"
	"net/http"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/stream"
	"github.com/httpkv/httpkv/stream/multi"
)

// ownerAuthorizer is an Authorizer that knows the owners of streams of
// many watchers (multi.Owner).
type ownerAuthorizer interface {
	// Owner returns who r acts as.
	Owner(r *http.Request) (multi.Owner, error)
	// RecheckOwner decides a for the owner o as things stand now,
	// without a token; the error says why not (streamEndReason).
	RecheckOwner(o multi.Owner, a Access) error
}

// Owner returns r's user while auth is on, no one while it is off.
func (x authAuthorizer) Owner(r *http.Request) (multi.Owner, error) {
	if !x.a.Enabled() {
		return multi.Owner{}, nil
	}
	token, err := requestToken(r)
	if err != nil {
		return multi.Owner{}, err
	}
	user, id, err := x.a.Owner(token)
	if err != nil {
		return multi.Owner{}, err
	}
	return multi.Owner{User: user, ID: id, AuthOn: true}, nil
}

// RecheckOwner: a stream made while auth was off ends once it is on, one
// made by a user ends once auth is off or the user is deleted (even if
// created again since), and the user must be allowed a.
func (x authAuthorizer) RecheckOwner(o multi.Owner, a Access) error {
	if !x.a.Enabled() {
		if o.AuthOn {
			return auth.ErrAuthDisabled
		}
		return nil
	}
	if !o.AuthOn {
		return auth.ErrAuthEnabled
	}
	if id, ok := x.a.UserID(o.User); !ok || id != o.ID {
		return auth.ErrUserDeleted
	}
	return x.a.AuthorizeUser(o.User, a)
}

// streamOwner returns who r acts as, for the streams it may see.
func (h *Handler) streamOwner(r *http.Request) (multi.Owner, error) {
	oa, ok := h.cfg.Authorizer.(ownerAuthorizer)
	if !ok {
		return multi.Owner{}, nil
	}
	return oa.Owner(r)
}

// streamAuthority is the Authorizer as the stream engine rechecks its
// streams' owners with it (multi.Authority).
type streamAuthority struct {
	changes streamAuthorizer // nil when the Authorizer has no stream checks
	owners  ownerAuthorizer  // nil when it knows no owners: all may read all
}

func newStreamAuthority(a Authorizer) streamAuthority {
	x := streamAuthority{}
	x.changes, _ = a.(streamAuthorizer)
	x.owners, _ = a.(ownerAuthorizer)
	return x
}

// Changed is the signal of the next change of users, roles or the
// enabled flag; nil (never) when the Authorizer has none.
func (x streamAuthority) Changed() <-chan struct{} {
	if x.changes == nil {
		return nil
	}
	return x.changes.Changed()
}

// Recheck decides for o now: whether it may still have its streams, or
// read every range of read.
func (x streamAuthority) Recheck(o multi.Owner, read ...keyrange.Range) error {
	if x.owners == nil {
		return nil
	}
	return x.owners.RecheckOwner(o, Access{Read: read})
}

// Reason is the canceled message's reason for err, in the contract's
// words.
func (x streamAuthority) Reason(err error) string { return streamEndReason(err) }

// connGuard is the Guard of a connection reading a stream: it ends with
// its token (expired or revoked); what ends the owner's right to the
// stream (the user deleted, auth turned on or off) ends the stream, whose
// collector rechecks it (multi.Authority), its last messages first.
func connGuard(a streamAuthorizer, changed <-chan struct{}, caller streamCaller) stream.Guard {
	g := streamGuard(a, changed, caller, Access{})
	if a != nil {
		g.Recheck = func() error {
			err := a.Recheck(caller, Access{})
			if errors.Is(err, auth.ErrTokenRevoked) || errors.Is(err, auth.ErrTokenExpired) {
				return err
			}
			return nil
		}
	}
	return g
}
