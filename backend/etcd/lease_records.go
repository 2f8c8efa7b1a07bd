package etcd

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// A lease is the deployment's when it holds the deployment's record of
// it: the key
//
//	N + "lease/" + the ID as 16 lowercase hex digits
//
// (empty value) attached to the lease itself when it is granted, so that
// etcd deletes the record with the lease, whether it expires or is
// revoked, at the revision that deletes its keys. Leases granted through
// another namespace, or by a client of etcd's own, have no record here:
// for this deployment they do not exist. The records are what the
// deployment lists (in ID order: the hex digits sort as the numbers do),
// counts (status, --max-leases) and checks before it renews, reads or
// revokes a lease, and inside every write that attaches a key to one
// (leaseCheckKV), so that no key of the namespace is ever attached to a
// lease of another. No ID above 2^53-1 has a record: such leases are
// never listed or accepted.
//
// A gateway that dies between etcd's grant and the record's put leaves a
// lease that is no deployment's; it expires after its TTL.

// leasesPrefix is the sub-prefix of the namespace that holds the records.
const leasesPrefix = "lease/"

// leaseRecord is the record's key of lease id.
func (b *Backend) leaseRecord(id int64) string {
	return fmt.Sprintf("%s%s%016x", b.opts.Namespace, leasesPrefix, uint64(id))
}

// leaseRecordsEnd is the end of the range of every record.
func (b *Backend) leaseRecordsEnd() string {
	return clientv3.GetPrefixRangeEnd(b.opts.Namespace + leasesPrefix)
}

// leaseOfRecord returns the lease ID of a record's key.
func (b *Backend) leaseOfRecord(key []byte) (int64, bool) {
	pfx := len(b.opts.Namespace) + len(leasesPrefix)
	if len(key) != pfx+16 {
		return 0, false
	}
	var raw [8]byte
	if _, err := hex.Decode(raw[:], key[pfx:]); err != nil || hex.EncodeToString(raw[:]) != string(key[pfx:]) {
		return 0, false // not a record's spelling
	}
	id := int64(binary.BigEndian.Uint64(raw[:]))
	return id, id >= 1 && id <= maxLeaseID
}

// ownLease fails with kv.ErrLeaseNotFound unless the lease is the
// namespace's: one read of its record.
func (b *Backend) ownLease(ctx context.Context, id int64) error {
	if id < 1 || id > maxLeaseID {
		return kv.LeaseNotFound(id)
	}
	return b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, b.leaseRecord(id), clientv3.WithCountOnly())
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		if resp.Count == 0 {
			return kv.LeaseNotFound(id)
		}
		return nil
	})
}

// countLeases counts the namespace's leases: one count of its records.
func (b *Backend) countLeases(ctx context.Context) (int64, error) {
	var n int64
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, b.opts.Namespace+leasesPrefix, clientv3.WithRange(b.leaseRecordsEnd()), clientv3.WithCountOnly())
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		n = resp.Count
		return nil
	})
	if err == nil {
		b.leaseCount.set(n)
	}
	return n, err
}

// leaseCountMaxAge is how long a count of the records serves Grant's
// bound before it is read again: a count walks every record in etcd's
// index, too much for every grant of a deployment holding a million.
const leaseCountMaxAge = time.Second

// leaseCounter holds the namespace's leases to Options.MaxLeases. It
// counts the records at most once per leaseCountMaxAge and adds the
// grants through this gateway since, each counted from its admission
// (released if it fails); leases that expire or are revoked leave the
// count at the next read. So one gateway passes the bound by at most the
// grants it had in flight when it last counted, and several gateways
// granting at once by at most what the others granted within one
// leaseCountMaxAge.
type leaseCounter struct {
	max int64 // 0: no bound

	// countMu serialises the counts, so that a crowd of grants waits for
	// one.
	countMu sync.Mutex
	mu      sync.Mutex // guards the fields below; taken after countMu
	n       int64      // the count last read, plus the grants admitted since
	read    time.Time  // when the count was read; zero before the first
}

// set records a count just read.
func (c *leaseCounter) set(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n, c.read = n, time.Now()
}

// release takes back the admission of a grant that failed.
func (c *leaseCounter) release() {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
}

// take admits a grant if the count is recent and below max. counted is
// false when the count must be read again first.
func (c *leaseCounter) take() (n int64, admitted, counted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.read.IsZero() || time.Since(c.read) > leaseCountMaxAge {
		return c.n, false, false
	}
	if c.n >= c.max {
		return c.n, false, true
	}
	c.n++
	return c.n, true, true
}

// admit admits a grant, counted until it is released, or fails with
// kv.ErrTooManyLeases when the namespace holds max leases or more,
// counting them again first when the last count is old.
func (c *leaseCounter) admit(ctx context.Context, b *Backend) error {
	if c.max <= 0 {
		return nil
	}
	n, admitted, counted := c.take()
	if !counted {
		c.countMu.Lock()
		// Another grant may have counted while this one waited.
		if n, admitted, counted = c.take(); !counted {
			if _, err := b.countLeases(ctx); err != nil {
				c.countMu.Unlock()
				return err
			}
			n, admitted, _ = c.take()
		}
		c.countMu.Unlock()
	}
	if !admitted {
		return kv.Errorf(kv.ErrTooManyLeases, "this deployment holds %d leases, as many as it may (%d): revoke some, or wait for some to expire", n, c.max)
	}
	return nil
}
