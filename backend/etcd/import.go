package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/kv"
)

// importBatchBytes bounds the keys and values of one txn of an import,
// below etcd's default --max-request-bytes (1.5 MiB), so that batching
// never makes a txn etcd refuses that a put of one key would pass.
const importBatchBytes = 1 << 20

// Source is the state Import copies: an embedded store's current keys,
// leases and auth records (a snapshot.Contents).
type Source interface {
	Leases() []kv.Lease
	// Keys calls fn with each live key, in key order.
	Keys(fn func(kv.KeyValue) error) error
	// AuthRecords calls fn with each of auth's persisted records (a user,
	// a role, the enabled switch), in auth's encoding, which the gateway
	// stores as they are.
	AuthRecords(fn func(bucket, key, value []byte) error) error
}

// Imported counts what Import wrote.
type Imported struct {
	Keys, Leases, AuthRecords int
	// Revision is etcd's revision once everything was written.
	Revision int64
}

// ErrNotEmpty: Import found the namespace in use.
var ErrNotEmpty = errors.New("the etcd namespace is not empty")

// Import copies src into the namespace of opts, which must hold nothing
// yet: no key, no lease of its own, no user, role or auth switch. Leases are granted with their IDs and their full TTLs, as after
// a restart of the embedded store; keys are put with their leases, in
// txns of at most MaxTxnOps puts and importBatchBytes; auth's records are
// written in one txn, last, so that a deployment whose import failed
// halfway still answers without auth and can be emptied and imported
// again. Revisions, versions and history are etcd's own afterwards: the
// import writes the current state, not the history that led to it.
func Import(ctx context.Context, opts Options, src Source) (Imported, error) {
	b, err := Open(ctx, nil, opts)
	if err != nil {
		return Imported{}, err
	}
	defer b.Close()
	if err := b.checkEmpty(ctx); err != nil {
		return Imported{}, err
	}
	var done Imported
	for _, l := range src.Leases() {
		_, err := b.Grant(ctx, l.ID, l.TTL)
		if errors.Is(err, kv.ErrLeaseExists) {
			// The namespace held none: another deployment, or a client
			// of etcd's own, holds the ID.
			return done, fmt.Errorf("grant lease %d (ttl %d s): a lease outside %s has this ID (lease IDs are the cluster's)", l.ID, l.TTL, b.namespaceName())
		}
		if err != nil {
			return done, fmt.Errorf("grant lease %d (ttl %d s): %w", l.ID, l.TTL, err)
		}
		done.Leases++
	}
	batch := &importBatch{b: b, max: b.opts.MaxTxnOps}
	err = src.Keys(func(k kv.KeyValue) error {
		if err := batch.add(ctx, k); err != nil {
			return err
		}
		done.Keys++
		return nil
	})
	if err == nil {
		err = batch.flush(ctx)
	}
	if err != nil {
		return done, err
	}
	err = b.writeAuth(func(t auth.Bucket) error {
		return src.AuthRecords(func(bucket, key, value []byte) error {
			done.AuthRecords++
			return t.UnsafePut(bucket, key, value)
		})
	})
	if err != nil {
		return done, fmt.Errorf("write auth's records: %w", err)
	}
	done.Revision = b.Rev()
	return done, nil
}

// checkEmpty fails with ErrNotEmpty unless the namespace holds no key,
// no lease, no auth record: leases and keys elsewhere in the cluster are
// other deployments' and do not matter. Its message says what it found.
func (b *Backend) checkEmpty(ctx context.Context) error {
	res, err := b.Range(ctx, kv.RangeRequest{Key: []byte{0}, End: []byte{0}, Options: kv.RangeOptions{CountOnly: true}})
	if err != nil {
		return err
	}
	leases, err := b.countLeases(ctx)
	if err != nil {
		return err
	}
	var found []string
	for _, n := range []struct {
		count int64
		what  string
	}{
		{res.Count, "key"}, {leases, "lease"},
		{int64(len(b.auth.Users())), "user"}, {int64(len(b.auth.Roles())), "role"},
	} {
		switch {
		case n.count == 1:
			found = append(found, "1 "+n.what)
		case n.count > 1:
			found = append(found, fmt.Sprintf("%d %ss", n.count, n.what))
		}
	}
	if b.auth.Enabled() {
		found = append(found, "auth enabled")
	}
	if len(found) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s holds %s", ErrNotEmpty, b.namespaceName(), strings.Join(found, ", "))
}

// namespaceName names the namespace for people.
func (b *Backend) namespaceName() string {
	if b.opts.Namespace == "" {
		return "the whole key space (no namespace)"
	}
	return fmt.Sprintf("the namespace %q", b.opts.Namespace)
}

// importBatch gathers puts into txns.
type importBatch struct {
	b     *Backend
	max   int
	ops   []kv.Op
	bytes int
}

func (ib *importBatch) add(ctx context.Context, k kv.KeyValue) error {
	size := len(k.Key) + len(k.Value)
	if len(ib.ops) > 0 && (len(ib.ops) >= ib.max || ib.bytes+size > importBatchBytes) {
		if err := ib.flush(ctx); err != nil {
			return err
		}
	}
	ib.ops = append(ib.ops, kv.Op{Put: &kv.PutRequest{Key: k.Key, Value: k.Value, Lease: k.Lease}})
	ib.bytes += size
	return nil
}

func (ib *importBatch) flush(ctx context.Context) error {
	if len(ib.ops) == 0 {
		return nil
	}
	if _, err := ib.b.Txn(ctx, kv.TxnRequest{Success: ib.ops}, nil); err != nil {
		first, last := ib.ops[0].Put.Key, ib.ops[len(ib.ops)-1].Put.Key
		return fmt.Errorf("put the %d keys from %q to %q: %w", len(ib.ops), first, last, err)
	}
	ib.ops, ib.bytes = ib.ops[:0], 0
	return nil
}
