package concurrency

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// LeaderKey identifies a candidate that won an election: what a later
// proclaim or resign presents, as etcd's v3election LeaderKey.
type LeaderKey struct {
	Name []byte
	// Key is the candidate's key, OwnerKey(Name, Lease).
	Key []byte
	// Revision is Key's create revision: a key re-created since (after the
	// lease ended and a new campaign) is another candidacy.
	Revision int64
	Lease    int64
}

// check validates a LeaderKey a client presented.
func (l LeaderKey) check() error {
	if err := checkOwnerKey(l.Name, l.Key); err != nil {
		return err
	}
	if l.Revision <= 0 {
		return invalidf("the leader's revision must be positive, not %d", l.Revision)
	}
	return checkLease(l.Lease)
}

// isOurs is the compare that the key is still this candidacy's.
func (l LeaderKey) isOurs() []kv.Compare {
	return []kv.Compare{createdAt(l.Key, l.Revision), leasedTo(l.Key, l.Lease)}
}

// Campaign runs for leader of the election called name with lease, as
// etcd's v3election does: it puts value at OwnerKey(name, lease) (or, if
// the lease is a candidate already, sets value there, leading or not)
// and waits
// until its key is the oldest under Prefix(name). It returns the winning
// candidacy and the revision at which it was seen leading.
//
// The timeout, the context and the errors are Lock's; on failure the key
// it put is deleted again.
func Campaign(ctx context.Context, b Backend, name []byte, lease int64, value []byte, timeout time.Duration) (LeaderKey, int64, error) {
	e, err := join(ctx, b, name, lease, value)
	if err != nil {
		return LeaderKey{}, 0, err
	}
	l := LeaderKey{Name: name, Key: e.key, Revision: e.rev, Lease: lease}
	if e.existing != nil && !bytes.Equal(e.existing.Value, value) {
		if _, err := l.setValue(ctx, b, value); err != nil {
			if errors.Is(err, ErrNotLeader) {
				err = e.lost(ctx, b)
			}
			return LeaderKey{}, 0, err
		}
	}
	rev, err := e.wait(ctx, b, timeout)
	if err != nil {
		return LeaderKey{}, 0, err
	}
	return l, rev, nil
}

// Proclaim sets the value of the leader's key: only while l leads (its
// key is the oldest under Prefix(name)) and the key is still the one it
// created, attached to its lease; ErrNotLeader otherwise, and nothing
// changes. A candidate that waits may not proclaim, as observers would
// see its value the moment it leads. It returns the revision of the put.
func Proclaim(ctx context.Context, b Backend, l LeaderKey, value []byte) (int64, error) {
	if err := l.leads(ctx, b); err != nil {
		return 0, err
	}
	return l.setValue(ctx, b, value)
}

// setValue puts value at l's key if the key is still the one l created,
// leading or not: what a candidate that campaigns again does to its own
// key (as etcd's Campaign); ErrNotLeader otherwise.
func (l LeaderKey) setValue(ctx context.Context, b Backend, value []byte) (int64, error) {
	return l.ifOurs(ctx, b, putOp(l.Key, value, l.Lease))
}

// Resign ends a leadership by deleting the leader's key: only while l
// leads and the key is still the one it created; ErrNotLeader otherwise,
// and nothing changes (a waiting candidate leaves by letting its campaign
// end or its lease go). The next candidate, if any, then leads. It
// returns the revision of the delete.
func Resign(ctx context.Context, b Backend, l LeaderKey) (int64, error) {
	if err := l.leads(ctx, b); err != nil {
		return 0, err
	}
	return l.ifOurs(ctx, b, deleteOp(l.Key))
}

// leads checks l and that it leads: its key, as created, is the oldest
// under the prefix; ErrNotLeader if not. Once true it stays true for as
// long as the key exists as created, since every key created later has
// a higher create revision: so the txn that follows, which checks that
// the key is still ours, acts only for the leader, even if the read was
// served at an older revision than the txn's.
func (l LeaderKey) leads(ctx context.Context, b Backend) error {
	if err := l.check(); err != nil {
		return err
	}
	leader, _, err := leaderAt(ctx, b, l.Name, 0)
	switch {
	case err != nil:
		return err
	case leader == nil || !bytes.Equal(leader.Key, l.Key) || leader.CreateRevision != l.Revision:
		return ErrNotLeader
	}
	return nil
}

// ifOurs runs op if l's key is still the one l created, attached to its
// lease, and returns the revision of the txn; ErrNotLeader otherwise.
func (l LeaderKey) ifOurs(ctx context.Context, b Backend, op kv.Op) (int64, error) {
	res, err := b.Txn(ctx, txnIf(l.isOurs(), []kv.Op{op}, nil))
	if err != nil {
		return 0, err
	}
	if !res.Succeeded {
		return 0, ErrNotLeader
	}
	return res.Revision, nil
}

// Leader returns the leader of the election called name, the oldest key
// under Prefix(name), and the revision it was read at; ErrNoLeader when
// there is none.
func Leader(ctx context.Context, b Backend, name []byte) (kv.KeyValue, int64, error) {
	if err := checkName(name); err != nil {
		return kv.KeyValue{}, 0, err
	}
	leader, rev, err := leaderAt(ctx, b, name, 0)
	if err != nil {
		return kv.KeyValue{}, 0, err
	}
	if leader == nil {
		return kv.KeyValue{}, rev, ErrNoLeader
	}
	return *leader, rev, nil
}

// leaderAt reads the leader of the election called name at revision rev
// (0: now): the oldest key, or nil. It returns the revision read.
func leaderAt(ctx context.Context, b Backend, name []byte, rev int64) (*kv.KeyValue, int64, error) {
	res, err := b.Range(ctx, byCreate(name, rev, 1, 0, false))
	if err != nil {
		return nil, 0, err
	}
	if rev == 0 {
		rev = res.Revision
	}
	if len(res.KVs) == 0 {
		return nil, rev, nil
	}
	return &res.KVs[0], rev, nil
}
