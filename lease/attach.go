package lease

import (
	"github.com/httpkv/httpkv/kv"
)

// Attach records that key is now put with the lease. The store calls it
// once the write is committed, after Detach from the key's earlier lease.
//
// Before Restore, an unknown ID is remembered for Restore: mvcc.Open
// attaches every leased key before the lease records are loaded. After
// Restore an unknown ID is ignored. It does not happen: the store looked
// the lease up when the key was put, and a revoke later in the same batch
// is applied after the attachment.
func (l *Lessor) Attach(id int64, key []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.leases[id]; ok {
		if e.keys == nil {
			e.keys = make(map[string]struct{})
		}
		e.keys[string(key)] = struct{}{}
		return
	}
	if l.restored {
		return
	}
	keys := l.pending[id]
	if keys == nil {
		keys = make(map[string]struct{})
		l.pending[id] = keys
	}
	keys[string(key)] = struct{}{}
}

// Detach records that key is no longer put with the lease: it was put
// with another lease or none, or deleted. The store calls it once the
// write is committed; for a lease already revoked it does nothing.
func (l *Lessor) Detach(id int64, key []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.leases[id]; ok {
		delete(e.keys, string(key))
		return
	}
	delete(l.pending[id], string(key))
}

// Keys returns copies of the keys attached to the lease by committed
// writes, sorted. Inside a write, Status (through the store's LeaseKeys)
// also sees what the open batch attached and detached.
func (l *Lessor) Keys(id int64) ([][]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	e, ok := l.leases[id]
	if !ok {
		return nil, kv.LeaseNotFound(id)
	}
	return e.sortedKeys(nil)
}
