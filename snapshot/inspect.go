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
// structure and its records) and reports what it holds. It changes
// nothing.
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

// Examine checks the store in the file at path, a snapshot whose hash
// was verified or a bare bbolt file, and reports what it holds; it leaves
// Size and Hash to the caller. A snapshot's hash says only that the file
// is the one its maker wrote, and anyone can write one, so Examine trusts
// nothing inside: it checks the bbolt file's pages (mvcc.CheckFile), then
// reads every record as a server would and refuses one a server does
// not write (see open). It opens the file read-only and changes nothing.
func Examine(path string) (Info, error) {
	if err := mvcc.CheckFile(path); err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if isEtcd(path) {
		return examineEtcd(path)
	}
	s, err := open(path, nil)
	if err != nil {
		return Info{}, err
	}
	defer s.close()
	return s.info(), nil
}

// store is an httpkv store opened read-only, with its leases and auth's
// records loaded as a server loads them.
type store struct {
	kv     *mvcc.Store
	lessor *lease.Lessor
	auth   *auth.Store
}

// open opens the httpkv store in the checked bbolt file at path
// read-only and loads it as a server does: the history's records, each
// checked (mvcc.Open), the leases, each live leased key's lease among
// them, and auth's records, which pass through record (if not nil) as
// they are read. A record a server would refuse is an ErrCorrupt.
func open(path string, record func(bucket, key, value []byte)) (*store, error) {
	lessor := lease.New(lease.Config{})
	kv, err := mvcc.Open(path, lessor, nil, mvcc.Options{ReadOnly: true})
	if err != nil {
		lessor.Close()
		return nil, corrupt(err)
	}
	s := &store{kv: kv, lessor: lessor, auth: auth.New(nil, nil, auth.Config{})}
	if err := s.load(record); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *store) load(record func(bucket, key, value []byte)) error {
	rt, err := s.kv.Read()
	if err != nil {
		return err
	}
	defer rt.End()
	if err := s.lessor.Restore(rt.UnsafeForEach); err != nil {
		return corrupt(err)
	}
	read := rt.UnsafeForEach
	if record != nil {
		read = func(bucket []byte, fn func(k, v []byte) error) error {
			return rt.UnsafeForEach(bucket, func(k, v []byte) error {
				record(bucket, k, v)
				return fn(k, v)
			})
		}
	}
	if err := s.auth.Restore(read); err != nil {
		return corrupt(err)
	}
	return nil
}

// info reports what the store holds, Size and Hash but.
func (s *store) info() Info {
	st := s.kv.Stats()
	return Info{
		Format:          FormatHTTPKV,
		Revision:        st.Revision,
		CompactRevision: st.CompactRevision,
		Keys:            st.Keys,
		Leases:          len(s.lessor.Leases()),
		Users:           len(s.auth.Users()),
		Roles:           len(s.auth.Roles()),
		AuthEnabled:     s.auth.Enabled(),
	}
}

func (s *store) close() error {
	s.lessor.Close()
	return s.kv.Close()
}

// corrupt marks a failure to load what a server loads as ErrCorrupt.
func corrupt(err error) error {
	if errors.Is(err, mvcc.ErrCorrupt) || errors.Is(err, lease.ErrCorrupt) || errors.Is(err, auth.ErrCorrupt) {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}
