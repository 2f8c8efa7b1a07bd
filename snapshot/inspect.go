package snapshot

import (
	"errors"
	"fmt"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
)

// Info is what a snapshot holds. Its JSON is what `httpkv snapshot status
// --json` prints.
type Info struct {
	Format          string `json:"format"`           // the store inside: FormatHTTPKV or FormatEtcd
	Revision        int64  `json:"revision"`         // the store's revision
	CompactRevision int64  `json:"compact_revision"` // history below it is gone
	Keys            int64  `json:"keys"`             // live keys at Revision
	Leases          int    `json:"leases"`
	Users           int    `json:"users"`
	Roles           int    `json:"roles"`
	AuthEnabled     bool   `json:"auth_enabled"`
	Size            int64  `json:"size"` // bytes of the file, the hash included
	Hash            string `json:"hash"` // SHA-256 of the data, in hex
}

// Inspect verifies the snapshot file at path (its hash, then its
// structure) and reports what it holds. It changes nothing.
func Inspect(path string) (Info, error) {
	hash, size, err := Verify(path)
	if err != nil {
		return Info{}, err
	}
	info, err := Examine(path)
	if err != nil {
		return Info{}, err
	}
	info.Size, info.Hash = size, hash
	return info, nil
}

// Examine checks the structure of the store in the file at path, a
// snapshot whose hash was verified or a bare bbolt file, and reports what
// it holds; it leaves Size and Hash to the caller. It opens the store
// read-only, so it changes nothing, and loads leases and auth as a server
// would, so that a record a server could not load is found here.
func Examine(path string) (Info, error) {
	if isEtcd(path) {
		return examineEtcd(path)
	}
	if err := mvcc.CheckFile(path); err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	kv, err := mvcc.Open(path, nil, nil, mvcc.Options{ReadOnly: true})
	if err != nil {
		return Info{}, corrupt(err)
	}
	defer kv.Close()
	st := kv.Stats()
	info := Info{Format: FormatHTTPKV, Revision: st.Revision, CompactRevision: st.CompactRevision, Keys: st.Keys}

	rt, err := kv.Read()
	if err != nil {
		return Info{}, err
	}
	defer rt.End()
	lessor := lease.New(lease.Config{})
	defer lessor.Close()
	if err := lessor.Restore(rt.UnsafeForEach); err != nil {
		return Info{}, corrupt(err)
	}
	info.Leases = len(lessor.Leases())
	a := auth.New(nil, nil, auth.Config{})
	if err := a.Restore(rt.UnsafeForEach); err != nil {
		return Info{}, corrupt(err)
	}
	info.Users, info.Roles, info.AuthEnabled = len(a.Users()), len(a.Roles()), a.Enabled()
	return info, nil
}

// corrupt marks a failure to load what a server loads as ErrCorrupt.
func corrupt(err error) error {
	if errors.Is(err, mvcc.ErrCorrupt) || errors.Is(err, lease.ErrCorrupt) || errors.Is(err, auth.ErrCorrupt) {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}
