package lease

// NewIdleManager returns a manager whose expiry loop does not run, for
// tests that take the Lessor's reports themselves and act through it.
func NewIdleManager(l *Lessor, w Writer) *Manager {
	m := &Manager{l: l, w: w, stop: make(chan struct{}), done: make(chan struct{})}
	close(m.done)
	return m
}

// NewObservedManager is NewManager with hooks that see each batch of
// expired leases the loop takes and each revoke it makes of one.
func NewObservedManager(l *Lessor, w Writer, onError func(error), batch func([]int64), revoked func(int64, error)) *Manager {
	return newManager(l, w, onError, expiryHooks{batch: batch, revoked: revoked})
}

// RevokeExpired revokes the lease as the expiry loop does: only if it is
// still expired.
func (m *Manager) RevokeExpired(id int64) (int64, error) { return m.revoke(id, true, nil) }
