package snapshot

import (
	"bytes"
	"fmt"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

// contentsPage is how many keys Contents.Keys reads at a time.
const contentsPage = 1000

// Contents is the current state a snapshot holds, open for reading: its
// live keys, its leases and auth's records, as a migration to another
// backend copies them. History is not part of it: another backend has
// revisions of its own.
type Contents struct {
	Info
	store  *mvcc.Store
	closer func() error
	leases []kv.Lease
	auth   []authRecord
}

// authRecord is one persisted record of auth's state (a user, a role, the
// enabled switch), in auth's own encoding.
type authRecord struct {
	bucket, key, value []byte
}

// Open verifies the snapshot of an httpkv store at path (its hash, its
// structure and its records, as Inspect does) and opens it read-only,
// with its leases and auth's records loaded as a server loads them, so
// that only records a server accepts are copied. The caller closes it.
func Open(path string) (*Contents, error) {
	hash, size, err := Verify(path)
	if err != nil {
		return nil, err
	}
	if err := mvcc.CheckFile(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if isEtcd(path) {
		return nil, ErrEtcdSnapshot
	}
	c := &Contents{}
	s, err := open(path, func(bucket, key, value []byte) {
		c.auth = append(c.auth, authRecord{bytes.Clone(bucket), bytes.Clone(key), bytes.Clone(value)})
	})
	if err != nil {
		return nil, err
	}
	c.Info, c.store, c.closer = s.info(), s.kv, s.close
	c.Info.Size, c.Info.Hash = size, hash
	for _, id := range s.lessor.Leases() {
		st, err := s.lessor.TimeToLive(id, false)
		if err != nil {
			s.close()
			return nil, err
		}
		c.leases = append(c.leases, kv.Lease{ID: id, TTL: st.TTL})
	}
	return c, nil
}

// Leases returns every lease with the TTL it was granted.
func (c *Contents) Leases() []kv.Lease { return c.leases }

// AuthRecords calls fn with each of auth's records, until fn fails.
func (c *Contents) AuthRecords(fn func(bucket, key, value []byte) error) error {
	for _, r := range c.auth {
		if err := fn(r.bucket, r.key, r.value); err != nil {
			return err
		}
	}
	return nil
}

// Keys calls fn with each live key at the snapshot's revision, in key
// order, until fn fails.
func (c *Contents) Keys(fn func(kv.KeyValue) error) error {
	from := []byte{0}
	for {
		res, err := c.store.Range(from, []byte{0}, kv.RangeOptions{Revision: c.Revision, Limit: contentsPage})
		if err != nil {
			return fmt.Errorf("read the keys from %q: %w", from, err)
		}
		for _, k := range res.KVs {
			if err := fn(k); err != nil {
				return err
			}
		}
		if !res.More || len(res.KVs) == 0 {
			return nil
		}
		from = append(bytes.Clone(res.KVs[len(res.KVs)-1].Key), 0)
	}
}

// Close closes the snapshot's file.
func (c *Contents) Close() error { return c.closer() }
