package snapshot

import (
	"bytes"
	"fmt"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
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
	leases []kv.Lease
	auth   []authRecord
}

// authRecord is one persisted record of auth's state (a user, a role, the
// enabled switch), in auth's own encoding.
type authRecord struct {
	bucket, key, value []byte
}

// Open verifies the snapshot at path (its hash, then its structure) and
// opens it read-only. The caller closes it.
func Open(path string) (*Contents, error) {
	info, err := Inspect(path)
	if err != nil {
		return nil, err
	}
	store, err := mvcc.Open(path, nil, nil, mvcc.Options{ReadOnly: true})
	if err != nil {
		return nil, corrupt(err)
	}
	c := &Contents{Info: info, store: store}
	if err := c.load(); err != nil {
		store.Close()
		return nil, err
	}
	return c, nil
}

// load reads the leases and auth's records, loading them as a server
// would, so that only records a server accepts are copied.
func (c *Contents) load() error {
	rt, err := c.store.Read()
	if err != nil {
		return err
	}
	defer rt.End()
	lessor := lease.New(lease.Config{})
	defer lessor.Close()
	if err := lessor.Restore(rt.UnsafeForEach); err != nil {
		return corrupt(err)
	}
	for _, id := range lessor.Leases() {
		st, err := lessor.TimeToLive(id, false)
		if err != nil {
			return err
		}
		c.leases = append(c.leases, kv.Lease{ID: id, TTL: st.TTL})
	}
	// auth reads exactly the buckets it persists: note what it reads.
	record := func(bucket []byte, fn func(k, v []byte) error) error {
		return rt.UnsafeForEach(bucket, func(k, v []byte) error {
			c.auth = append(c.auth, authRecord{bytes.Clone(bucket), bytes.Clone(k), bytes.Clone(v)})
			return fn(k, v)
		})
	}
	if err := auth.New(nil, nil, auth.Config{}).Restore(record); err != nil {
		return corrupt(err)
	}
	return nil
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
func (c *Contents) Close() error { return c.store.Close() }
