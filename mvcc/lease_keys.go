package mvcc

import (
	"bytes"
	"slices"

	"github.com/httpkv/httpkv/kv"
)

// leaseMove is a write's change of a key's lease: from the lease it had
// (0 for none) to the one it has now (0 for none, or deleted).
type leaseMove struct {
	key      []byte
	from, to int64
}

// moveLease records that key moved from one lease to another and stages
// telling the Lessor, once the write is durable.
func (t *WriteTxn) moveLease(key []byte, from, to int64) {
	t.leases = append(t.leases, leaseMove{key: key, from: from, to: to})
	l := t.s.lessor
	if l == nil {
		return
	}
	t.Stage(func() {
		if from != 0 {
			l.Detach(from, key)
		}
		if to != 0 {
			l.Attach(to, key)
		}
	}, nil)
}

// LeaseKeys returns the keys attached to the lease as this transaction
// sees them, sorted: those the Lessor has from committed writes, changed
// by the writes of the open batch before this one and by this one's own
// so far. A check that must see every key a lease holds at the time of a
// write — a revoke deleting them, a put with the lease by a caller who
// must be allowed to write them — calls it inside that write. It fails
// with ErrLeaseNotFound when the lease does not exist.
func (t *WriteTxn) LeaseKeys(id int64) ([][]byte, error) {
	l := t.s.lessor
	if l == nil || !l.Lookup(id) {
		return nil, kv.LeaseNotFound(id)
	}
	// A lease granted by the open batch has no committed keys yet.
	committed, _ := l.Keys(id)
	keys := make(map[string][]byte, len(committed))
	for _, k := range committed {
		keys[string(k)] = k
	}
	for _, moves := range [][]leaseMove{t.s.batchMoves, t.leases} {
		for _, m := range moves {
			if m.from == id {
				delete(keys, string(m.key))
			}
			if m.to == id {
				keys[string(m.key)] = bytes.Clone(m.key)
			}
		}
	}
	out := make([][]byte, 0, len(keys))
	for _, k := range keys {
		out = append(out, k)
	}
	slices.SortFunc(out, bytes.Compare)
	return out, nil
}
