package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/auth"
)

// streamOwner is who a stream of many watchers belongs to: a user, by
// name and ID (a user created again under the name of a deleted one has
// another ID, and none of her streams), or no one while auth is off. A
// stream outlives the token it was made with: any valid token of its
// owner reads it, and it ends only when the owner no longer can
// (deleted, or auth turned on or off).
type streamOwner struct {
	user   string
	id     string
	authOn bool
}

// ownerAuthorizer is an Authorizer that knows the owners of streams.
type ownerAuthorizer interface {
	// Owner returns who r acts as.
	Owner(r *http.Request) (streamOwner, error)
	// RecheckOwner decides a for the owner o as things stand now,
	// without a token; the error says why not (streamEndReason).
	RecheckOwner(o streamOwner, a Access) error
}

// Owner returns r's user while auth is on, no one while it is off.
func (x authAuthorizer) Owner(r *http.Request) (streamOwner, error) {
	if !x.a.Enabled() {
		return streamOwner{}, nil
	}
	token, err := requestToken(r)
	if err != nil {
		return streamOwner{}, err
	}
	user, id, err := x.a.Owner(token)
	if err != nil {
		return streamOwner{}, err
	}
	return streamOwner{user: user, id: id, authOn: true}, nil
}

// RecheckOwner: a stream made while auth was off ends once it is on, one
// made by a user ends once auth is off or the user is deleted (even if
// created again since), and the user must be allowed a.
func (x authAuthorizer) RecheckOwner(o streamOwner, a Access) error {
	if !x.a.Enabled() {
		if o.authOn {
			return auth.ErrAuthDisabled
		}
		return nil
	}
	if !o.authOn {
		return auth.ErrAuthEnabled
	}
	if id, ok := x.a.UserID(o.user); !ok || id != o.id {
		return auth.ErrUserDeleted
	}
	return x.a.AuthorizeUser(o.user, a)
}

// streamOwner returns who r acts as, for the streams it may see.
func (h *Handler) streamOwner(r *http.Request) (streamOwner, error) {
	oa, ok := h.cfg.Authorizer.(ownerAuthorizer)
	if !ok {
		return streamOwner{}, nil
	}
	return oa.Owner(r)
}
